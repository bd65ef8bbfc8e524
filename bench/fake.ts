/**
 * The bench's side of the loopback fake OpenRouter, which runs in a worker thread (bench/fakeWorker.ts):
 * start it, script its answers, read its counters, close it.
 */
import { Worker } from "node:worker_threads"
import type { Behavior, Script } from "../test/support/fakeOpenRouter.js"
import type { FakeReply, FakeRequest, FakeStats } from "./fakeWorker.js"

export interface Fake {
  readonly url: string
  readonly setScript: (script: Script, fallback?: Behavior) => Promise<FakeStats>
  readonly reset: () => Promise<FakeStats>
  readonly stats: () => Promise<FakeStats>
  readonly close: () => Promise<void>
}

type Command = { readonly type: "setScript"; readonly script: Script; readonly default?: Behavior } | {
  readonly type: "reset" | "stats" | "close"
}

/** The worker is the bundle bench/run.mjs builds from bench/fakeWorker.ts, beside the bench's own. */
export const startFake = (): Promise<Fake> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./fakeWorker.mjs", import.meta.url))
    let nextId = 0
    const pending = new Map<number, (stats: FakeStats) => void>()
    const call = (command: Command): Promise<FakeStats> =>
      new Promise((done) => {
        const id = ++nextId
        pending.set(id, done)
        worker.postMessage({ ...command, id } as FakeRequest)
      })
    worker.on("error", reject)
    worker.on("message", (reply: FakeReply) => {
      if (reply.type === "ready") {
        resolve({
          url: reply.url,
          setScript: (script, fallback) => call({ type: "setScript", script, ...(fallback ? { default: fallback } : {}) }),
          reset: () => call({ type: "reset" }),
          stats: () => call({ type: "stats" }),
          close: async () => {
            await call({ type: "close" })
            await worker.terminate()
          }
        })
      } else {
        pending.get(reply.id)?.(reply.stats)
        pending.delete(reply.id)
      }
    })
  })
