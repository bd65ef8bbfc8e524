import { Effect, Option, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import type { EvalItem } from "../../src/programs/eval/dataset.js"
import { runEval } from "../../src/programs/eval/runEval.js"
import { scorers } from "../../src/programs/eval/scorers.js"
import type { StrategyName } from "../../src/programs/strategies/registry.js"
import { fullDiskFor, interruptedRun, resumeLayerFor } from "../support/resumeLayers.js"
import { makeScriptedClient, type ScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

// What an eval resume pays for (issue 23, finding 15): the runs an earlier pass left on disk without a result
// line are recorded, or synthesized again from their answers, instead of being asked again. runEval in-process
// over a scripted model client, which counts the calls (eval's calls over HTTP are evalCli.test.ts's). An eval killed
// during a synthesis (a process) is test/e2e/evalResume.test.ts's.

const tempDir = makeTempDirs("pllm-eval-resume-")

/** The model client of the pass under way; `reset` gives the next pass a fresh one, its calls counted from zero. */
let client: ScriptedClient | undefined
const reset = async () => {
  client = await Effect.runPromise(makeScriptedClient({
    "er/one": [{ answer: "one says 4" }],
    "er/two": [{ answer: "two says four" }],
    "er/synth": [{ answer: "#### 4" }]
  }))
}
const current = (): ScriptedClient => {
  if (client === undefined) throw new Error("reset() gives a pass its client")
  return client
}

const callsTo = (prefix: string) => Effect.runSync(Ref.get(current().requests)).filter((r) => r.model.startsWith(prefix)).length

const layerFor = (settings: Parameters<typeof resumeLayerFor>[0], fileSystem?: Parameters<typeof resumeLayerFor>[1]) =>
  resumeLayerFor(settings, fileSystem, current().layer)

const settingsFor = (dir: string) =>
  makeTestSettings({
    outputDir: path.join(dir, "runs"),
    models: ["er/one", "er/two"],
    synthesizer: "er/synth",
    retries: 0
  })

const item = (line: number, id: string, question: string): EvalItem => ({ line, id, question, answer: "4", candidates: undefined })

const evalOf = (items: ReadonlyArray<EvalItem>, output: string, strategies: ReadonlyArray<StrategyName> = ["synthesize"]) =>
  runEval({ items, strategies, scorer: scorers.numeric, output, runs: 1 })

const readResults = (file: string) =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Record<string, unknown>)

const ANSWERS = [["er/one", "one says 4"], ["er/two", "two says four"]] as const

describe("an eval resume pays only for what is missing", () => {
  it("records the runs answered while the results file could not be written, without asking again", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    const items = [item(1, "a", "2+2?"), item(2, "b", "3+1?"), item(3, "c", "1+3?")]
    const settings = settingsFor(dir)
    await reset()
    // The first pass: the first item is answered, then its result line hits a full disk and the eval stops.
    const first = await Effect.runPromise(
      Effect.either(evalOf(items, output)).pipe(Effect.provide(layerFor(settings, fullDiskFor(output))))
    )
    expect(first).toMatchObject({ _tag: "Left", left: { _tag: "StoreError" } })
    expect(callsTo("er/")).toBe(3)
    expect(fs.readFileSync(output, "utf8")).toBe("")

    await reset()
    const second = await Effect.runPromise(evalOf(items, output).pipe(Effect.provide(layerFor(settings))))
    expect(second.progress).toMatchObject({ ok: 3, failed: 0, correct: 3 })
    // Only b and c were asked: a's run was on disk.
    expect(callsTo("er/")).toBe(2 * 3)
    const results = readResults(output)
    expect(results.map((r) => [r.id, r.status, r.correct])).toEqual([["a", "ok", true], ["b", "ok", true], ["c", "ok", true]])
    expect(fs.readFileSync(path.join(String(results[0]?.runDir), "prompt.md"), "utf8")).toBe("2+2?")
  })

  it("does not take a run of another strategy for the pair's", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    const items = [item(1, "a", "2+2?")]
    const settings = settingsFor(dir)
    await reset()
    const first = await Effect.runPromise(
      Effect.either(evalOf(items, output)).pipe(Effect.provide(layerFor(settings, fullDiskFor(output))))
    )
    expect(first).toMatchObject({ _tag: "Left" })

    // The same question under rank: the synthesize run on disk is no answer of rank's, so it is asked.
    await reset()
    const second = await Effect.runPromise(evalOf(items, output, ["rank"]).pipe(Effect.provide(layerFor(settings))))
    expect(second.progress).toMatchObject({ ok: 1 })
    expect(callsTo("er/one")).toBeGreaterThan(0)
    expect(readResults(output).map((r) => r.strategy)).toEqual(["rank"])
  })

  it("records a rank run answered on disk without a call, and asks again when the judges changed since", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    const items = [item(1, "a", "2+2?")]
    const settings = { ...settingsFor(dir), judges: Option.some(["er/one"]) }
    await reset()
    const first = await Effect.runPromise(
      Effect.either(evalOf(items, output, ["rank"])).pipe(Effect.provide(layerFor(settings, fullDiskFor(output))))
    )
    expect(first).toMatchObject({ _tag: "Left", left: { _tag: "StoreError" } })
    const paid = callsTo("er/")
    expect(paid).toBeGreaterThan(0)

    // Another judge: the run on disk was judged by er/one, so it answers no pair of this eval.
    await reset()
    const other = await Effect.runPromise(
      evalOf(items, output, ["rank"]).pipe(
        Effect.provide(layerFor({ ...settings, judges: Option.some(["er/two"]) }))
      )
    )
    expect(other.progress).toMatchObject({ ok: 1 })
    expect(callsTo("er/")).toBe(paid)

    await reset()
    const second = await Effect.runPromise(evalOf(items, output, ["rank"]).pipe(Effect.provide(layerFor(settings))))
    expect(second.progress).toMatchObject({ ok: 1, correct: 1 })
    expect(callsTo("er/")).toBe(0)
    // The other judge's line, then this one's, taken from the first pass's run.
    const results = readResults(output)
    expect(results.map((r) => [r.strategy, r.status])).toEqual([["rank", "ok"], ["rank", "ok"]])
    expect(results[1]?.runDir).not.toBe(results[0]?.runDir)
  })

  it("records a run over frozen answers without a call when its answers on disk are the item's, word for word", async () => {
    const frozen = (second: string): EvalItem => ({
      ...item(1, "a", "2+2?"),
      candidates: [{ model: "m1", content: "A: 4" }, { model: "m2", content: second }]
    })
    /** A first pass stopped by the full disk, then a second with `item`: what the second paid. */
    const resumeWith = async (next: EvalItem) => {
      const dir = tempDir()
      const output = path.join(dir, "q.eval.jsonl")
      const settings = settingsFor(dir)
      await reset()
      const first = await Effect.runPromise(
        Effect.either(evalOf([frozen("A: 5")], output)).pipe(Effect.provide(layerFor(settings, fullDiskFor(output))))
      )
      expect(first).toMatchObject({ _tag: "Left", left: { _tag: "StoreError" } })
      expect(callsTo("er/synth")).toBe(1)
      await reset()
      const second = await Effect.runPromise(evalOf([next], output).pipe(Effect.provide(layerFor(settings))))
      expect(second.progress).toMatchObject({ ok: 1 })
      return callsTo("er/")
    }
    expect(await resumeWith(frozen("A: 5"))).toBe(0)
    // The same models, another answer: the run on disk synthesized other answers.
    expect(await resumeWith(frozen("A: 6"))).toBe(1)
  })

  it("synthesizes an interrupted synthesize run again from its answers on disk: only the synthesis is paid", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    fs.writeFileSync(output, "")
    const settings = settingsFor(dir)
    const interrupted = await interruptedRun(settings, "2+2?", ANSWERS, "synthesize")

    await reset()
    const { progress } = await Effect.runPromise(evalOf([item(1, "a", "2+2?")], output).pipe(Effect.provide(layerFor(settings))))
    expect(progress).toMatchObject({ ok: 1, failed: 0, correct: 1 })
    expect(callsTo("er/one") + callsTo("er/two")).toBe(0)
    expect(callsTo("er/synth")).toBe(1)
    const [result] = readResults(output)
    const manifest = JSON.parse(fs.readFileSync(path.join(String(result?.runDir), "run.json"), "utf8")) as Record<string, unknown>
    expect(manifest).toMatchObject({ status: "ok", source: interrupted.id })
  })

  it("asks an interrupted rank run's candidates again: a re-synthesis would skip its judges", async () => {
    const dir = tempDir()
    const output = path.join(dir, "q.eval.jsonl")
    fs.writeFileSync(output, "")
    const settings = settingsFor(dir)
    await interruptedRun(settings, "2+2?", ANSWERS, "rank")

    await reset()
    const { progress } = await Effect.runPromise(evalOf([item(1, "a", "2+2?")], output, ["rank"]).pipe(Effect.provide(layerFor(settings))))
    expect(progress).toMatchObject({ ok: 1 })
    const [result] = readResults(output)
    const manifest = JSON.parse(fs.readFileSync(path.join(String(result?.runDir), "run.json"), "utf8")) as Record<string, unknown>
    expect(manifest).not.toHaveProperty("source")
    expect(manifest).toMatchObject({ strategy: { name: "rank" } })
  })
})
