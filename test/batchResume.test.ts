import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Exit, Fiber, Layer, Logger } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { holdResultsLock } from "../src/programs/batchLock.js"
import { runBatch } from "../src/programs/runBatch.js"
import { layerCallGate } from "../src/services/CallGate.js"
import { layerOpenRouterClient } from "../src/services/OpenRouterClient.js"
import { layerRunStore } from "../src/services/RunStore.js"
import type { SettingsValue } from "../src/services/Settings.js"
import { layerSettings } from "../src/services/Settings.js"
import { failureOf } from "./support/failureOf.js"
import { type FakeOpenRouter, startFakeOpenRouter } from "./support/fakeOpenRouter.js"
import { realHttpClientLayer, waitUntil } from "./support/realHttpClient.js"
import { makeTempDirs } from "./support/tempDirs.js"
import { makeTestSettings } from "./support/testSettings.js"

// What a batch pays for across passes and processes (issue 23, findings 12 and 15): one lock per real results
// file, and a resume that re-synthesizes or records what is already on disk instead of asking again.
// runBatch in-process against the loopback fake, which counts the calls.

let fake: FakeOpenRouter
const tempDir = makeTempDirs("pllm-batch-resume-")

beforeAll(async () => {
  fake = await startFakeOpenRouter({
    script: {
      "lock/hang": { kind: "hang" },
      "lock/synth": { kind: "ok", content: "synthesized" }
    }
  })
})
afterAll(async () => {
  await fake?.close()
})

const jsonl = (lines: ReadonlyArray<unknown>) => lines.map((l) => JSON.stringify(l)).join("\n") + "\n"
const callsTo = (prefix: string) => fake.chatRequests().filter((r) => r.model?.startsWith(prefix)).length

const layerFor = (settings: SettingsValue) =>
  Layer.mergeAll(layerOpenRouterClient, layerRunStore, layerCallGate(settings.concurrency)).pipe(
    Layer.provideMerge(Layer.mergeAll(layerSettings(settings), realHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
    Layer.merge(Logger.remove(Logger.defaultLogger))
  )

/** A batch as the CLI runs it: the results file's lock first, held until the batch ends. */
const lockedBatch = (input: string, output: string) =>
  Effect.zipRight(holdResultsLock(output, false), runBatch({ input, output, runs: 2 })).pipe(Effect.scoped)

describe("the results file's lock", () => {
  it("is taken on the real path: a second batch through a symlinked --out is refused and pays nothing", async () => {
    const dir = tempDir()
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, jsonl([{ id: "a", prompt: "hang" }]))
    const output = path.join(dir, "in.results.jsonl")
    fs.writeFileSync(output, "")
    const linked = path.join(dir, "linked.jsonl")
    fs.symlinkSync(output, linked)
    // The same file again, through a symlinked directory, before it exists.
    const realDir = path.join(dir, "real")
    fs.mkdirSync(realDir)
    fs.symlinkSync(realDir, path.join(dir, "alias"))

    const settings = makeTestSettings({
      baseUrl: fake.url,
      outputDir: path.join(dir, "runs"),
      models: ["lock/hang"],
      synthesizer: "lock/synth"
    })
    const program = Effect.gen(function*() {
      const first = yield* Effect.fork(lockedBatch(input, output))
      yield* Effect.promise(() => waitUntil(() => callsTo("lock/hang") === 1, "the first batch asking", 30_000))
      // The second batch's lock alone: the batch itself would hang on the same model if the lock let it through.
      const second = yield* failureOf(Effect.scoped(holdResultsLock(linked, false)))
      const third = yield* Effect.fork(lockedBatch(input, path.join(realDir, "new.jsonl")))
      yield* Effect.promise(() => waitUntil(() => callsTo("lock/hang") === 2, "the third batch asking", 30_000))
      const fourth = yield* failureOf(Effect.scoped(holdResultsLock(path.join(dir, "alias", "new.jsonl"), false)))
      yield* Fiber.interrupt(first)
      yield* Fiber.interrupt(third)
      return { second, fourth, firstExit: yield* Fiber.await(first) }
    })
    fake.reset()
    const { second, fourth, firstExit } = await Effect.runPromise(program.pipe(Effect.provide(layerFor(settings))))
    expect(second).toMatchObject({ _tag: "UsageError" })
    expect(second.message).toContain(`${linked} is in use by batch process ${process.pid}`)
    expect(fourth.message).toContain("is in use by batch process")
    expect(Exit.isInterrupted(firstExit)).toBe(true)
    expect(callsTo("lock/hang")).toBe(2)
  })
})
