import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, Logger, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { BadRequest, Forbidden } from "../../src/domain/errors.js"
import { parseBatchInput } from "../../src/programs/batchInput.js"
import { answeredIn, type BatchResult, defaultResultsPath } from "../../src/programs/batchResults.js"
import { runBatch } from "../../src/programs/runBatch.js"
import { layerCallGate } from "../../src/services/callGate.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { makeGate } from "../support/fakeOpenRouter.js"
import { cliEffect, type InProcessOptions, runCliInProcess } from "../support/inProcessCli.js"
import { jsonl } from "../support/jsonl.js"
import { realHttpClientLayer } from "../support/realHttpClient.js"
import { makeScriptedClient, type ScriptedClient } from "../support/scriptedClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// `batch` in-process: what a user sees (results file, resume, a bad line, a failing prompt, bad usage) through the
// command line over a scripted model client that answers as the fake below does, and runBatch against the loopback
// fake for the shared bound on calls (and connections) in flight. Ctrl-C, which needs a process, is
// test/e2e/batch.test.ts's. Every test has its own models, files and output directory. No timing assertions.

const { root: tmp, freshDir } = tempRoot("pllm-batch-")

// The loopback fake of runBatch's bound on calls in flight: each call held at a gate the test opens.
const boundHeld = makeGate()
const provider = withFakeProvider({
  script: Object.fromEntries(
    ["b1", "b2", "b3", "b4", "b5", "bsynth"].map((m) => [`bound/${m}`, { kind: "ok" as const, until: boundHeld.until }])
  )
})

/** A model client that answers as the fake's script does (its costs too); one a test, its calls counted from zero. */
const scripted = () =>
  Effect.runPromise(makeScriptedClient({
    "res/one": [{ answer: "one says 4", cost: 0.001 }],
    "res/two": [{ answer: "two says four", cost: 0.002 }],
    "res/synth": [{ answer: "The answer is 4.", cost: 0.003 }],
    "res/down": [{ fail: new BadRequest({ model: "res/down", message: "HTTP 400", httpStatus: 400 }) }],
    "res/down2": [{ fail: new Forbidden({ model: "res/down2", message: "HTTP 403", httpStatus: 403 }) }],
    // Fails on its first call, answers from the second on: a failed prompt that a second pass can fix.
    "flaky/only": [{ fail: new BadRequest({ model: "flaky/only", message: "HTTP 400", httpStatus: 400 }) }, { answer: "now I answer" }]
  }))
/** `parallel-llm ...args` in-process over `client`. */
const runCli = (client: ScriptedClient, args: ReadonlyArray<string>, options: InProcessOptions) =>
  Effect.runPromise(cliEffect(args, { ...options, overrides: client.layer }))
const callsTo = (client: ScriptedClient, model: string) => Effect.runSync(Ref.get(client.requests)).filter((r) => r.model === model).length

const envFor = (outputDir: string, extra: Readonly<Record<string, string>> = {}) =>
  fakeCliEnv(provider.fake.url, { home: tmp, outputDir }, { PARALLEL_LLM_RETRY_BASE_DELAY: "0.01", ...extra })

const readResults = (file: string): Array<BatchResult> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as BatchResult)

/** The current state of each id: the last line for it wins. */
const lastById = (results: ReadonlyArray<BatchResult>) => new Map(results.map((r) => [r.id, r]))

describe("batch input and results (units)", () => {
  it("parses ids, defaults them to the line number, reports bad lines with their number, and lists repeated ids", () => {
    const { items, bad, duplicates } = parseBatchInput(
      [
        `{"prompt": "first"}`,
        `{"id": "b", "prompt": "second", "models": ["x/y"], "synthesizer": "x/s"}`,
        ``,
        `not json`,
        `{"id": "b", "prompt": "again"}`,
        `{"prompt": "  "}`,
        `{"prompt": "typo", "modles": ["x/y"]}`,
        `["prompt"]`,
        `{"id": 9, "prompt": "numeric id"}`,
        `{"prompt": "bad model", "models": ["not a model id"]}`
      ].join("\n")
    )
    expect(items.map((i) => [i.line, i.id, i.prompt])).toEqual([
      [1, "1", "first"],
      [2, "b", "second"],
      [9, "9", "numeric id"]
    ])
    expect(items[1]).toMatchObject({ models: ["x/y"], synthesizer: "x/s" })
    expect(bad.map((b) => b.line)).toEqual([4, 6, 7, 8, 10])
    expect(bad.find((b) => b.line === 4)?.message).toMatch(/^line 4: not valid JSON/)
    expect(duplicates).toEqual([{ id: "b", lines: [2, 5] }])
    expect(bad.find((b) => b.line === 6)?.message).toMatch(/^line 6: prompt: must not be empty/)
    expect(bad.find((b) => b.line === 7)?.message).toMatch(/^line 7: modles: is unexpected/)
    expect(bad.find((b) => b.line === 8)?.message).toMatch(/expected a JSON object/)
    expect(bad.find((b) => b.line === 10)?.message).toMatch(/not a model id/)
  })

  it("knows which ids are answered: the last line per id, ok or partial, invalid lines aside", () => {
    const answered = answeredIn(jsonl([
      { id: "a", status: "failed", promptSha256: "h1" },
      { id: "a", status: "ok", promptSha256: "h1" },
      { id: "b", status: "ok", promptSha256: "h2" },
      { id: "b", status: "cancelled", promptSha256: "h2" },
      { id: "c", status: "partial", promptSha256: "h3" },
      { id: "d", status: "failed", invalid: true },
      "{\"id\": \"e\", \"status\": \"o" // a line cut short by a crash
    ]))
    expect([...answered.entries()]).toEqual([["a", "h1"], ["c", "h3"]])
    expect(defaultResultsPath("/x/questions.jsonl")).toBe("/x/questions.results.jsonl")
    expect(defaultResultsPath("/x/questions.txt")).toBe("/x/questions.txt.results.jsonl")
  })
})

describe("parallel-llm batch (in-process)", () => {
  it("writes one result line per prompt, marks a bad line and a failing prompt failed, and the others go on", async () => {
    const dir = freshDir("results")
    const input = path.join(dir, "questions.jsonl")
    fs.writeFileSync(
      input,
      jsonl([
        { id: "q1", prompt: "What is 2+2?" },
        "{ this is not json",
        { prompt: "And 3+1?" },
        { id: "all-fail", prompt: "Nobody answers this", models: ["res/down", "res/down2"] }
      ])
    )
    const result = await runCli(
      await scripted(),
      ["batch", input, "-m", "res/one", "-m", "res/two", "-s", "res/synth", "--concurrency", "4", "--runs", "2"],
      { env: envFor(path.join(dir, "runs")), timeoutMs: 120_000 }
    )
    expect(result.code, result.stderr).toBe(1) // a prompt failed
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("line 2: not valid JSON")
    expect(result.stderr).toMatch(/batch done: 4\/4 · 2 ok, 2 failed/)

    const results = readResults(path.join(dir, "questions.results.jsonl"))
    expect(results).toHaveLength(4)
    const byId = lastById(results)
    expect(byId.get("q1")).toMatchObject({ status: "ok", line: 1 })
    expect(byId.get("q1")!.cost).toBeCloseTo(0.006, 6)
    expect(byId.get("3")).toMatchObject({ status: "ok", line: 3 })
    expect(byId.get("2")).toMatchObject({ status: "failed", line: 2, runDir: null, cost: null, invalid: true })
    expect(byId.get("all-fail")).toMatchObject({ status: "failed", line: 4, error: "no candidate answered" })
    for (const r of results) expect(Object.keys(r).slice(0, 4)).toEqual(["id", "runDir", "status", "cost"])

    // Each run directory is a whole run, as `ask` would leave it.
    const q1 = byId.get("q1")!
    expect(fs.readFileSync(path.join(q1.runDir!, "final.md"), "utf8")).toBe("The answer is 4.")
    const manifest = JSON.parse(fs.readFileSync(path.join(q1.runDir!, "run.json"), "utf8"))
    expect(manifest).toMatchObject({ status: "ok", candidates: [{ model: "res/one" }, { model: "res/two" }] })
    const failed = JSON.parse(fs.readFileSync(path.join(byId.get("all-fail")!.runDir!, "run.json"), "utf8"))
    expect(failed.status).toBe("failed")
    expect(failed.candidates.map((c: { model: string }) => c.model)).toEqual(["res/down", "res/down2"])
  })

  it("resumes: a second pass skips the answered prompts and retries the failed ones", async () => {
    const dir = freshDir("resume")
    const input = path.join(dir, "work.jsonl")
    const out = path.join(dir, "out", "results.jsonl")
    fs.mkdirSync(path.dirname(out))
    fs.writeFileSync(
      input,
      jsonl([
        { id: "steady", prompt: "Answered the first time" },
        { id: "flaky", prompt: "Fails the first time", models: ["flaky/only"] }
      ])
    )
    const args = ["batch", input, "--out", out, "-m", "res/one", "-s", "res/synth", "--retries", "0"]
    const env = envFor(path.join(dir, "runs"))
    const client = await scripted()

    const first = await runCli(client, args, { env, timeoutMs: 120_000 })
    expect(first.code, first.stderr).toBe(1)
    const afterFirst = readResults(out)
    expect(afterFirst.map((r) => [r.id, r.status])).toEqual(expect.arrayContaining([["steady", "ok"], ["flaky", "failed"]]))
    expect(afterFirst).toHaveLength(2)
    const steadyDir = lastById(afterFirst).get("steady")!.runDir

    const requestsBefore = callsTo(client, "res/one")
    const second = await runCli(client, args, { env, timeoutMs: 120_000 })
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toContain("1 skipped")
    const afterSecond = readResults(out)
    expect(afterSecond).toHaveLength(3) // appended, never rewritten
    expect(afterSecond.slice(0, 2)).toEqual(afterFirst)
    expect(afterSecond[2]).toMatchObject({ id: "flaky", status: "ok" })
    // The answered prompt was not asked again: its run is the first pass's, and res/one got no new request.
    expect(lastById(afterSecond).get("steady")!.runDir).toBe(steadyDir)
    expect(callsTo(client, "res/one")).toBe(requestsBefore)
    expect(fs.readdirSync(path.join(dir, "runs"))).toHaveLength(3)

    // A third pass has nothing left to do.
    const third = await runCli(client, args, { env, timeoutMs: 120_000 })
    expect(third.code, third.stderr).toBe(0)
    expect(readResults(out)).toHaveLength(3)
    expect(third.stderr).toContain("2 skipped")
  })

  it("self with two -m models samples the first and says once that the second is not asked", async () => {
    const dir = freshDir("self")
    const input = path.join(dir, "self.jsonl")
    fs.writeFileSync(input, jsonl([{ prompt: "a" }, { prompt: "b" }]))
    const client = await scripted()
    const args = ["batch", input, "-m", "res/one", "-m", "res/two", "-s", "res/synth", "--strategy", "self", "--samples", "2"]
    const r = await runCli(client, args, { env: envFor(dir) })
    expect(r.code, r.stderr).toBe(0)
    expect(callsTo(client, "res/one")).toBe(4)
    expect(callsTo(client, "res/two")).toBe(0)
    expect(r.stderr.split("strategy self samples res/one only: res/two not asked")).toHaveLength(2)
  })

  it("refuses bad usage before any call: a missing input file, --runs 0", async () => {
    const dir = freshDir("usage")
    const missing = await runCliInProcess(["batch", path.join(dir, "nope.jsonl")], { env: envFor(dir) })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/cannot read .*nope\.jsonl/)
    fs.writeFileSync(path.join(dir, "one.jsonl"), jsonl([{ prompt: "hi" }]))
    const zero = await runCliInProcess(["batch", path.join(dir, "one.jsonl"), "--runs", "0"], { env: envFor(dir) })
    expect(zero.code).toBe(2)
    expect(zero.stderr).toContain("--runs must be a whole number")
    expect(fs.existsSync(path.join(dir, "one.results.jsonl"))).toBe(false)
  })
})

describe("runBatch in-process: one bound on calls in flight for all runs", () => {
  it("never has more calls in flight (or connections) than --concurrency, with several runs at once", async () => {
    const dir = freshDir("bound")
    const input = path.join(dir, "many.jsonl")
    // Four prompts, all four runs at once (--runs 4): 4 × 5 candidates would be 20 calls at once without the bound;
    // more prompts only repeat the same waves.
    fs.writeFileSync(input, jsonl(Array.from({ length: 4 }, (_, i) => ({ prompt: `prompt ${i}` }))))
    const settings = makeTestSettings({
      baseUrl: provider.fake.url,
      stream: true,
      outputDir: path.join(dir, "runs"),
      models: ["bound/b1", "bound/b2", "bound/b3", "bound/b4", "bound/b5"],
      synthesizer: "bound/bsynth",
      concurrency: 3,
      retryBaseDelayMs: 10
    })
    const layer = Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies, layerCallGate(settings.concurrency)).pipe(
      Layer.provideMerge(Layer.mergeAll(Settings.Test(settings), realHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )
    // Count from a quiet start: nothing of another test still in flight at the fake.
    await waitFor("no request in flight", () => provider.fake.inFlight === 0, 30_000)
    provider.fake.reset()
    const batch = Effect.runPromise(
      runBatch({ input, output: path.join(dir, "many.results.jsonl"), runs: 4 }).pipe(Effect.provide(layer))
    )
    // Every answer is held until the bound is full and a moment longer (without the bound, 20 calls by then), then
    // all are let through at once.
    await provider.fake.waitForRequests(3)
    await new Promise((resolve) => setTimeout(resolve, 50))
    boundHeld.open()
    const progress = await batch
    expect(progress).toMatchObject({ total: 4, ok: 4, failed: 0 })
    const calls = provider.fake.chatRequests().filter((r) => r.model?.startsWith("bound/"))
    expect(calls).toHaveLength(4 * 6)
    // 4 runs × 5 candidates would be 20 at once without the shared bound.
    expect(provider.fake.maxInFlight).toBeGreaterThanOrEqual(2)
    expect(provider.fake.maxInFlight).toBeLessThanOrEqual(3)
    expect(provider.fake.connections).toBeLessThanOrEqual(3)
    expect(readResults(path.join(dir, "many.results.jsonl")).every((r) => r.status === "ok")).toBe(true)
  })
})
