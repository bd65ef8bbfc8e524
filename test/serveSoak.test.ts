import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Fiber, Layer, Stream } from "effect"
import * as path from "node:path"
import { PassThrough } from "node:stream"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { describe, expect, it } from "vitest"
import { serveMcp } from "../src/mcp/server.js"
import { layerLogging } from "../src/services/Logging.js"
import { ModelClient, type ModelPart } from "../src/services/modelClient.js"
import { layerRunStore } from "../src/services/RunStore.js"
import { layerSettings } from "../src/services/Settings.js"
import { makeTempDirs } from "./support/tempDirs.js"
import { makeTestSettings } from "./support/testSettings.js"

// Issue 23, finding 6: a long-lived `serve` must not keep anything per answered call. The stdio server
// in-process, with the real logger (info lines on) and the real run store, answers 2,000 `process_prompt`
// calls from the SDK's own client; the heap after a full collection stays flat over the last 1,000. The first
// 1,000 are warm-up: the server keeps its last 200 finished runs on purpose, and V8's type feedback for the
// hot paths goes on growing for several hundred calls (measured from call 200, a build without the leak
// still grew ~800 bytes a call, from call 1,000 under 400; the leak this catches was 3,000-4,000).

const tempDir = makeTempDirs("pllm-soak-")

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

v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

/**
 * The heap's objects after a full collection. Compiled code is left out: V8 goes on optimizing hot functions
 * for thousands of calls, and that is bounded by the program's size, not by the work it does.
 */
const heapAfterGc = () => {
  gc()
  gc()
  return v8.getHeapSpaceStatistics().filter((space) => space.space_name !== "code_space" && space.space_name !== "code_large_object_space")
    .reduce((sum, space) => sum + space.space_used_size, 0)
}

const CALLS = 2_000
const FROM = 1_000
const MAX_BYTES_PER_CALL = 500

describe("serve over a long life", () => {
  it(`keeps its heap flat over ${CALLS} answered calls (at most ${MAX_BYTES_PER_CALL} bytes a call after call ${FROM})`, async () => {
    const settings = makeTestSettings({
      outputDir: path.join(tempDir(), "runs"),
      models: ["soak/one", "soak/two"],
      synthesizer: "soak/synth",
      logLevel: "info"
    })
    let logged = 0
    const layer = Layer.mergeAll(answering, layerRunStore, layerLogging(settings, [], () => void logged++)).pipe(
      Layer.provideMerge(Layer.mergeAll(layerSettings(settings), NodeFileSystem.layer, NodePath.layer))
    )
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const server = Effect.runFork(serveMcp({ stdin, stdout }).pipe(Effect.provide(layer)))
    const client = new Client({ name: "soak", version: "1.0.0" })
    await client.connect(new StreamsTransport(stdin, stdout))

    let before = 0
    for (let call = 1; call <= CALLS; call++) {
      const result = await client.callTool({ name: "process_prompt", arguments: { prompt: `question ${call}` } })
      if (result.isError === true) throw new Error(JSON.stringify(result.content))
      // A collection now and then, as a server's idle moments give: dead fibers' entries in the scheduler's
      // WeakMap are cleared by collections, and between them its table would grow to hold them.
      if (call % 50 === 0) gc()
      if (call === FROM) before = heapAfterGc()
    }
    const after = heapAfterGc()
    await client.close()
    await Effect.runPromise(Fiber.await(server))

    expect(logged).toBeGreaterThan(CALLS * 2)
    const perCall = (after - before) / (CALLS - FROM)
    expect(perCall, `heap grew ${Math.round(perCall)} bytes a call`).toBeLessThanOrEqual(MAX_BYTES_PER_CALL)
  }, 300_000)
})
