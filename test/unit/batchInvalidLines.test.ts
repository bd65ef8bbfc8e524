import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect } from "@effect/vitest"
import { Effect, Fiber, Layer, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { progressText } from "../../src/cli/batchProgress.js"
import { runBatch } from "../../src/programs/runBatch.js"
import { Settings } from "../../src/services/settings.js"
import { itClock } from "../support/itClock.js"
import { jsonl } from "../support/jsonl.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { pendingSleeps } from "../support/testClock.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"

// A batch's invalid lines are in its total and its failed, but no run was made for them: the rate counts runs only,
// and a cost is "unknown" only when a run did not report one. runBatch in-process over a scripted client that
// reports no cost, an in-memory run store and the TestClock (the one run takes exactly 30 s of it), read
// through the progress line `batch` prints.

const tempDir = makeTempDirs("pllm-batch-invalid-")
const RUN_MS = 30_000

const batchOf = (lines: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const dir = tempDir()
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, jsonl(lines))
    // Neither model reports a cost; the candidate takes 30 s.
    const client = yield* makeScriptedClient({ "free/one": [{ answer: "4", delayMs: RUN_MS }], "free/synth": [{ answer: "4" }] })
    const settings = makeTestSettings({ outputDir: path.join(dir, "runs"), models: ["free/one"], synthesizer: "free/synth", retries: 0 })
    const layer = Layer.mergeAll(client.layer, makeTestRunStore().layer, Settings.Test(settings), NodeFileSystem.layer, NodePath.layer)
    const fiber = yield* Effect.fork(runBatch({ input, output: path.join(dir, "in.results.jsonl"), runs: 1 }).pipe(Effect.provide(layer)))
    // Once the candidate's 30 s are pending (the files are read by then), the clock moves past it and nothing else.
    yield* pendingSleeps((ahead) => ahead.includes(RUN_MS))
    yield* TestClock.adjust(RUN_MS)
    return yield* Fiber.join(fiber)
  })

describe("batch's invalid lines in its progress", () => {
  itClock.effect("are counted once: one run in 30 s, and the cost of the one run is unknown", () =>
    Effect.gen(function*() {
      const progress = yield* batchOf([{ id: "good", prompt: "2+2?" }, "{ not json", { id: "bad", prompt: "" }])
      expect(progress).toMatchObject({ total: 3, ok: 1, failed: 2, unknownCost: 1, elapsedMs: RUN_MS })
      // Not counted, they would be runs: "6.0/min" and "$0.0000 + unknown"; counted twice, "-2.0/min".
      expect(progressText(progress)).toBe("3/3 · 1 ok, 2 failed · 0 left · 0 running · 2.0/min · done · cost unknown · 30s")
    }))
})
