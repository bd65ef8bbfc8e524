import { Effect, Exit, Fiber, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { holdResultsLock } from "../../src/programs/batchLock.js"
import { runBatch } from "../../src/programs/runBatch.js"
import { failureOf } from "../support/failureOf.js"
import { jsonl } from "../support/jsonl.js"
import { fullDiskFor, interruptedRun, resumeLayerFor } from "../support/resumeLayers.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { waitFor } from "../support/waitFor.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// What a batch pays for across passes and processes (issue 23, findings 12 and 15): one lock per real results
// file, and a resume that re-synthesizes or records what is already on disk instead of asking again.
// runBatch in-process against the loopback fake, which counts the calls.

const provider = withFakeProvider({
  script: {
    "lock/hang": { kind: "hang" },
    "lock/synth": { kind: "ok", content: "synthesized" },
    "resume/one": { kind: "ok", content: "one says 4" },
    "resume/two": { kind: "ok", content: "two says four" },
    "resume/synth": { kind: "ok", content: "4" }
  }
})
const tempDir = makeTempDirs("pllm-batch-resume-")

const callsTo = (prefix: string) => provider.log().filter((r) => r.model?.startsWith(prefix)).length

const layerFor = resumeLayerFor

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

    const settings = provider.settings({
      outputDir: path.join(dir, "runs"),
      models: ["lock/hang"],
      synthesizer: "lock/synth"
    })
    const program = Effect.gen(function*() {
      const first = yield* Effect.fork(lockedBatch(input, output))
      yield* Effect.promise(() => waitFor("the first batch asking", () => callsTo("lock/hang") === 1, 30_000))
      // The second batch's lock alone: the batch itself would hang on the same model if the lock let it through.
      const second = yield* failureOf(Effect.scoped(holdResultsLock(linked, false)))
      const third = yield* Effect.fork(lockedBatch(input, path.join(realDir, "new.jsonl")))
      yield* Effect.promise(() => waitFor("the third batch asking", () => callsTo("lock/hang") === 2, 30_000))
      const fourth = yield* failureOf(Effect.scoped(holdResultsLock(path.join(dir, "alias", "new.jsonl"), false)))
      yield* Fiber.interrupt(first)
      yield* Fiber.interrupt(third)
      return { second, fourth, firstExit: yield* Fiber.await(first) }
    })
    provider.fake.reset()
    const { second, fourth, firstExit } = await Effect.runPromise(program.pipe(Effect.provide(layerFor(settings))))
    expect(second).toMatchObject({ _tag: "UsageError" })
    expect(second.message).toContain(`${linked} is in use by batch process ${process.pid}`)
    expect(fourth.message).toContain("is in use by batch process")
    expect(Exit.isInterrupted(firstExit)).toBe(true)
    expect(callsTo("lock/hang")).toBe(2)
  })
})

describe("a resume pays only for what is missing", () => {
  const settingsFor = (dir: string) =>
    provider.settings({
      outputDir: path.join(dir, "runs"),
      models: ["resume/one", "resume/two"],
      synthesizer: "resume/synth",
      retries: 0
    })
  const readResults = (file: string) =>
    fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Record<string, unknown>)

  it("records the runs answered while the results file could not be written, without asking again", async () => {
    const dir = tempDir()
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, jsonl([{ id: "a", prompt: "2+2?" }, { id: "b", prompt: "3+3?" }, { id: "c", prompt: "4+4?" }]))
    const output = path.join(dir, "in.results.jsonl")
    const settings = settingsFor(dir)
    provider.fake.reset()
    // The first pass: the first prompt is answered, then its result line hits a full disk and the batch stops.
    const first = await Effect.runPromise(
      Effect.either(runBatch({ input, output, runs: 1 })).pipe(Effect.provide(layerFor(settings, fullDiskFor(output))))
    )
    expect(first).toMatchObject({ _tag: "Left", left: { _tag: "StoreError" } })
    expect(callsTo("resume/")).toBe(3)
    expect(fs.readFileSync(output, "utf8")).toBe("")

    provider.fake.reset()
    const second = await Effect.runPromise(runBatch({ input, output, runs: 1 }).pipe(Effect.provide(layerFor(settings))))
    expect(second).toMatchObject({ ok: 3, failed: 0 })
    // Only b and c were asked: a's run was on disk.
    expect(callsTo("resume/")).toBe(2 * 3)
    const results = readResults(output)
    expect(results.map((r) => [r.id, r.status])).toEqual([["a", "ok"], ["b", "ok"], ["c", "ok"]])
    expect(fs.readFileSync(path.join(String(results[0]?.runDir), "prompt.md"), "utf8")).toBe("2+2?")
  })

  it("asks again a prompt whose run on disk was made with another --temperature or --max-tokens (issue 25, item 7)", async () => {
    const dir = tempDir()
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, jsonl([{ id: "a", prompt: "2+2?" }]))
    const output = path.join(dir, "in.results.jsonl")
    provider.fake.reset()
    // The first pass answers a, then its result line hits a full disk: the run is on disk without a line.
    const first = await Effect.runPromise(
      Effect.either(runBatch({ input, output, runs: 1 })).pipe(Effect.provide(layerFor(settingsFor(dir), fullDiskFor(output))))
    )
    expect(first).toMatchObject({ _tag: "Left", left: { _tag: "StoreError" } })
    for (const other of [{ temperature: 0.1 }, { maxTokens: Option.some(32) }]) {
      fs.writeFileSync(output, "")
      provider.fake.reset()
      const again = await Effect.runPromise(
        runBatch({ input, output, runs: 1 }).pipe(Effect.provide(layerFor({ ...settingsFor(dir), ...other })))
      )
      expect(again).toMatchObject({ ok: 1, failed: 0 })
      expect(callsTo("resume/")).toBe(3)
    }
  })

  it("synthesizes an interrupted run again from its answers on disk instead of asking its candidates", async () => {
    const dir = tempDir()
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, jsonl([{ id: "a", prompt: "2+2?" }]))
    const output = path.join(dir, "in.results.jsonl")
    fs.writeFileSync(output, "")
    const settings = settingsFor(dir)
    const interrupted = await interruptedRun(settings, "2+2?", [["resume/one", "one says 4"], ["resume/two", "two says four"]])

    provider.fake.reset()
    const progress = await Effect.runPromise(runBatch({ input, output, runs: 1 }).pipe(Effect.provide(layerFor(settings))))
    expect(progress).toMatchObject({ ok: 1, failed: 0 })
    expect(callsTo("resume/one") + callsTo("resume/two")).toBe(0)
    expect(callsTo("resume/synth")).toBe(1)
    const [result] = readResults(output)
    const manifest = JSON.parse(fs.readFileSync(path.join(String(result?.runDir), "run.json"), "utf8")) as Record<string, unknown>
    expect(manifest).toMatchObject({ status: "ok", source: interrupted.id })
  })
})
