import { Effect, Option, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import type { ModelRequest } from "../../src/domain/modelCall.js"
import type { EvalItem } from "../../src/programs/eval/dataset.js"
import { runEval } from "../../src/programs/eval/runEval.js"
import { scorers } from "../../src/programs/eval/scorers.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { fullDiskFor, resumeLayerFor } from "../support/resumeLayers.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

// Issue 25, item 7: an eval resume reuses a result only when its calls would be sent the same way. A change
// of temperature, max tokens or a model's own options between two passes asks again; no change pays nothing.
// runEval in-process over a scripted model client, which counts the calls (how each setting goes into a request
// body over HTTP is openAiCompatible.test.ts's and modelOptions.test.ts's).

const tempDir = makeTempDirs("pllm-eval-resume-settings-")

/** A fresh client for one pass: the calls it got are that pass's. */
const client = () =>
  Effect.runPromise(makeScriptedClient({
    "rs/one": [{ answer: "one says 4" }],
    "rs/two": [{ answer: "two says four" }],
    "rs/synth": [{ answer: "#### 4" }]
  }))

/** The last pass's requests. */
let sent: ReadonlyArray<ModelRequest> = []

const settingsFor = (dir: string, overrides: Partial<SettingsValue> = {}) =>
  makeTestSettings({
    outputDir: path.join(dir, "runs"),
    models: ["rs/one", "rs/two"],
    synthesizer: "rs/synth",
    retries: 0,
    ...overrides
  })

const items: ReadonlyArray<EvalItem> = [
  { line: 1, id: "a", question: "2+2?", answer: "4", candidates: undefined },
  { line: 2, id: "b", question: "3+1?", answer: "4", candidates: undefined }
]

/** One pass over both items with `settings`; the number of calls it made. */
const pass = async (output: string, settings: SettingsValue) => {
  const scripted = await client()
  const result = await Effect.runPromise(
    runEval({ items, strategies: ["synthesize"], scorer: scorers.numeric, output, runs: 1 }).pipe(
      Effect.provide(resumeLayerFor(settings, undefined, scripted.layer))
    )
  )
  expect(result.results.map((r) => [r.id, r.status, r.correct])).toEqual([["a", "ok", true], ["b", "ok", true]])
  sent = await Effect.runPromise(Ref.get(scripted.requests))
  return sent.filter((r) => r.model.startsWith("rs/")).length
}

describe("an eval resume compares everything that changes a call", () => {
  it("asks again when --temperature changed, and pays nothing when nothing did", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    // Two candidates and a synthesis per item.
    expect(await pass(output, settingsFor(dir))).toBe(6)
    expect(await pass(output, settingsFor(dir))).toBe(0)
    expect(await pass(output, settingsFor(dir, { temperature: 0.2 }))).toBe(6)
    for (const request of sent) expect(request).toMatchObject({ temperature: 0.2 })
    expect(await pass(output, settingsFor(dir, { temperature: 0.2 }))).toBe(0)
  })

  it("asks again when --max-tokens changed, and pays nothing when nothing did", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    expect(await pass(output, settingsFor(dir))).toBe(6)
    expect(await pass(output, settingsFor(dir, { maxTokens: Option.some(64) }))).toBe(6)
    expect(await pass(output, settingsFor(dir, { maxTokens: Option.some(64) }))).toBe(0)
    expect(await pass(output, settingsFor(dir, { maxTokens: Option.some(65) }))).toBe(6)
  })

  it("asks again when a model's own options in the config file changed", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    expect(await pass(output, settingsFor(dir))).toBe(6)
    const own = { modelOptions: { "rs/synth": { reasoning: { effort: "high" as const } } } }
    expect(await pass(output, settingsFor(dir, own))).toBe(6)
    expect(await pass(output, settingsFor(dir, own))).toBe(0)
  })

  /** A first pass whose first result line hits a full disk: item a's run is on disk without a line. */
  const unrecordedRun = async (dir: string, output: string) => {
    const scripted = await client()
    const first = await Effect.runPromise(
      Effect.either(runEval({ items, strategies: ["synthesize"], scorer: scorers.numeric, output, runs: 1 })).pipe(
        Effect.provide(resumeLayerFor(settingsFor(dir), fullDiskFor(output), scripted.layer))
      )
    )
    expect(first).toMatchObject({ _tag: "Left" })
    expect(fs.readFileSync(output, "utf8")).toBe("")
  }

  it("does not record a run left on disk without a result line when the temperature changed since", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    await unrecordedRun(dir, output)
    // Under another temperature a's run on disk is no answer: both items are asked.
    expect(await pass(output, settingsFor(dir, { temperature: 1.1 }))).toBe(6)
  })

  it("does not record a run left on disk without a result line when a model's own options changed since", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    await unrecordedRun(dir, output)
    const own = { modelOptions: { "rs/one": { provider: { sort: "price" as const } } } }
    expect(await pass(output, settingsFor(dir, own))).toBe(6)
  })

  it("records a run left on disk without a result line, without a call, when nothing changed", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    await unrecordedRun(dir, output)
    // Only b is asked: a's run is on disk, made the same way.
    expect(await pass(output, settingsFor(dir))).toBe(3)
  })
})
