import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Fiber, Layer, Stream, type Tracer } from "effect"
import { PassThrough } from "node:stream"
import type { ModelPart } from "../../src/domain/modelCall.js"
import { serveMcp } from "../../src/mcp/server.js"
import { Logging } from "../../src/services/logging.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { makeTestSettings } from "./testSettings.js"

// `serve` on stdio in this process, as a long-lived server runs: `serveMcp` itself (its span, its live runs)
// over streams, the real logger with info lines on, the real run store, and a provider that answers at once
// and keeps nothing. The soak test and `npm run bench`'s heap figure both drive it.

/** The client's end of the server's stdin and stdout, as an SDK transport. */
class StreamsTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void
  onclose?: () => void
  onerror?: (error: Error) => void
  private readonly buffer = new ReadBuffer()
  constructor(private readonly toServer: PassThrough, private readonly fromServer: PassThrough) {}
  start(): Promise<void> {
    this.fromServer.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) {
        this.onmessage?.(message)
      }
    })
    return Promise.resolve()
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message))
    return Promise.resolve()
  }
  close(): Promise<void> {
    this.toServer.end()
    this.onclose?.()
    return Promise.resolve()
  }
}

/** A provider that answers at once and keeps nothing (the scripted client records every request). */
const answering = ModelClient.Test({
  stream: (request) =>
    Stream.fromIterable<ModelPart>([
      { _tag: "TextDelta", text: `an answer from ${request.model}` },
      { _tag: "Usage", usage: { promptTokens: 10, completionTokens: 20 } },
      { _tag: "Finish", reason: "stop", servedBy: request.model }
    ]),
  listModels: () => Effect.succeed([])
})

export interface ServeOptions {
  /** Where the runs go. */
  readonly outputDir: string
  /** A tracer in place of Effect's own. */
  readonly tracer?: Tracer.Tracer | undefined
  /** Called after each answered call, numbered from 1. */
  readonly onCall?: ((call: number) => void) | undefined
}

/** Serves `calls` `process_prompt` calls from the SDK's own client, then closes stdin; how many lines were logged. */
export const serveInProcess = async (calls: number, options: ServeOptions): Promise<{ readonly logged: number }> => {
  const settings = makeTestSettings({
    outputDir: options.outputDir,
    models: ["soak/one", "soak/two"],
    synthesizer: "soak/synth",
    logLevel: "info"
  })
  let logged = 0
  const layer = Layer.mergeAll(answering, RunStore.DefaultWithoutDependencies, Logging.Test(settings, [], () => void logged++)).pipe(
    Layer.provideMerge(Layer.mergeAll(Settings.Test(settings), NodeFileSystem.layer, NodePath.layer))
  )
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const serve = serveMcp({ stdin, stdout }).pipe(Effect.provide(layer))
  const server = Effect.runFork(options.tracer === undefined ? serve : Effect.withTracer(serve, options.tracer))
  const client = new Client({ name: "soak", version: "1.0.0" })
  await client.connect(new StreamsTransport(stdin, stdout))
  for (let call = 1; call <= calls; call++) {
    const result = await client.callTool({ name: "process_prompt", arguments: { prompt: `question ${call}` } })
    if (result.isError === true) throw new Error(JSON.stringify(result.content))
    options.onCall?.(call)
  }
  await client.close()
  await Effect.runPromise(Fiber.await(server))
  return { logged }
}
