/**
 * The loopback fake OpenRouter in a worker thread, so that its own work (timers, JSON, SSE) runs on
 * another core than the pipeline being measured. The bench drives it with messages.
 */
import { parentPort } from "node:worker_threads"
import { type Behavior, type Script, startFakeOpenRouter } from "../test/support/fakeOpenRouter.js"

export type FakeRequest =
  | { readonly id: number; readonly type: "setScript"; readonly script: Script; readonly default?: Behavior }
  | { readonly id: number; readonly type: "reset" }
  | { readonly id: number; readonly type: "stats" }
  | { readonly id: number; readonly type: "close" }

export interface FakeStats {
  readonly connections: number
  readonly maxInFlight: number
  readonly inFlight: number
  readonly chatRequests: number
  readonly aborted: number
}

export type FakeReply =
  | { readonly type: "ready"; readonly url: string }
  | { readonly id: number; readonly type: "done"; readonly stats: FakeStats }

const port = parentPort
if (port === null) throw new Error("bench/fakeWorker must run in a worker thread")

const fake = await startFakeOpenRouter()
const stats = (): FakeStats => ({
  connections: fake.connections,
  maxInFlight: fake.maxInFlight,
  inFlight: fake.inFlight,
  chatRequests: fake.chatRequests().length,
  aborted: fake.abortedRequests().length
})

port.on("message", (message: FakeRequest) => {
  const reply = () => port.postMessage({ id: message.id, type: "done", stats: stats() } satisfies FakeReply)
  switch (message.type) {
    case "setScript":
      fake.setScript(message.script)
      if (message.default !== undefined) fake.setDefault(message.default)
      fake.reset()
      return reply()
    case "reset":
      fake.reset()
      return reply()
    case "stats":
      return reply()
    case "close":
      void fake.close().then(() => {
        reply()
        port.close()
      })
      return
  }
})
port.postMessage({ type: "ready", url: fake.url } satisfies FakeReply)
