import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Logger, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { BadRequest, ProviderFailure, Unauthorized } from "../../src/domain/errors.js"
import { Manifest } from "../../src/domain/manifest.js"
import { REPORT_INSTRUCTIONS, SYNTHESIZER_INSTRUCTIONS } from "../../src/programs/buildSynthesisPrompt.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import type { RunEvent } from "../../src/programs/run/request.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { failureOf } from "../support/failureOf.js"
import { itClock } from "../support/itClock.js"
import { makeScriptedClient, type Step } from "../support/scriptedClient.js"
import { noSpaceError, storeDiskWith } from "../support/storeDiskDoubles.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { advanceUntil, runToEnd } from "../support/testClock.js"
import { makeTestSettings } from "../support/testSettings.js"

const tempDir = makeTempDirs("parallel-llm-pipeline-")

/** The pipeline with a scripted client and the real run store on a temp dir. */
const setup = (script: Record<string, ReadonlyArray<Step>>, overrides: Partial<SettingsValue> = {}) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient(script)
    const settings = makeTestSettings({ outputDir: tempDir(), retryBaseDelayMs: 1, ...overrides })
    const layer = Layer.mergeAll(client.layer, RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(settings)),
      Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )
    return { client, settings, layer }
  })

/** The real run store with `writeResponse` changed: to hold a write back, or make it fail. */
const storeWithResponses = (
  writeResponse: (real: RunStore["writeResponse"]) => RunStore["writeResponse"]
): Layer.Layer<RunStore, never, RunStore> =>
  Layer.effect(RunStore, Effect.map(RunStore, (real) => ({ ...real, writeResponse: writeResponse(real.writeResponse) })))

const readManifest = (runDir: string) =>
  Schema.decodeUnknownSync(Manifest)(JSON.parse(fs.readFileSync(path.join(runDir, "run.json"), "utf8")))

const ok = (answer: string, delayMs = 0): Step => ({ answer, delayMs, cost: 0.001 })

/**
 * The pipeline over a disk that runs out of space on the files `full` picks: a few bytes of the
 * temporary file land, then ENOSPC, as on a full disk.
 */
const layerOnFullDisk = (settings: SettingsValue, full: (file: string) => boolean) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({ "test/synth": [ok("synthesized")] })
    const fullDisk = storeDiskWith((real) => ({
      writeFile: (file, data, options, done) =>
        full(file)
          ? real.writeFile(file, data.slice(0, 3), options, () => done(noSpaceError(file)))
          : real.writeFile(file, data, options, done)
    }))
    return Layer.mergeAll(client.layer, RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(settings)),
      Layer.provide(Layer.mergeAll(fullDisk, NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )
  }).pipe(Layer.unwrapEffect)

describe("runPipeline", () => {
  it.live("keeps every answer, synthesizes the successful ones, and reports a partial run", () =>
    Effect.gen(function*() {
      const { client, layer } = yield* setup({
        "test/alpha": [ok("alpha says 4")],
        "test/beta": [{ fail: new BadRequest({ model: "test/beta", message: "HTTP 400: bad", httpStatus: 400 }) }],
        "test/gamma": [ok("gamma says four")],
        "test/synth": [ok("The answer is 4.")]
      })
      const result = yield* runPipeline({ prompt: "What is 2+2?" }).pipe(Effect.provide(layer))

      expect(result.final).toBe("The answer is 4.")
      const manifest = readManifest(result.runDir)
      expect(manifest).toEqual(result.manifest)
      expect(manifest.status).toBe("partial")
      expect(manifest.candidates.map((c) => [c.model, c.status])).toEqual([
        ["test/alpha", "ok"],
        ["test/beta", "error"],
        ["test/gamma", "ok"]
      ])
      expect(manifest.candidates[1]).toMatchObject({ attempts: 1, error: { tag: "BadRequest", httpStatus: 400 } })
      expect(manifest.candidates[1]?.file).toBeUndefined()
      expect(manifest.candidates[0]).toMatchObject({ file: "responses/01-test-alpha.md", attempts: 1, servedBy: "test/alpha" })
      expect(fs.readFileSync(path.join(result.runDir, "responses/01-test-alpha.md"), "utf8")).toBe("alpha says 4")
      expect(fs.readFileSync(path.join(result.runDir, "responses/03-test-gamma.md"), "utf8")).toBe("gamma says four")
      expect(fs.existsSync(path.join(result.runDir, "responses/02-test-beta.md"))).toBe(false)
      expect(fs.readFileSync(path.join(result.runDir, "prompt.md"), "utf8")).toBe("What is 2+2?")
      expect(fs.readFileSync(path.join(result.runDir, "final.md"), "utf8")).toBe("The answer is 4.")
      expect(manifest.synthesis).toMatchObject({ model: "test/synth", status: "ok", file: "final.md" })
      expect(manifest.usage).toEqual({ promptTokens: 30, completionTokens: 60, cost: 0.003 })
      expect(manifest.prompt.chars).toBe(12)

      // The synthesizer saw the two answers, anonymised, and the mapping is kept.
      const requests = yield* Ref.get(client.requests)
      const synthesis = requests.find((r) => r.model === "test/synth")!
      // No catalogue says the synthesizer does structured output: the report is asked for in plain text.
      expect(synthesis.messages[0]).toEqual({ role: "system", content: `${SYNTHESIZER_INSTRUCTIONS}\n\n${REPORT_INSTRUCTIONS.text}` })
      expect(synthesis.responseFormat).toBeUndefined()
      expect(manifest.report).toEqual({ status: "unavailable", reason: "the synthesizer wrote no report after its answer" })
      const user = synthesis.messages[1]!.content
      expect(user).toContain("What is 2+2?")
      expect(user).toContain("alpha says 4")
      expect(user).toContain("gamma says four")
      expect(user).not.toContain("test/alpha")
      expect(user).not.toContain("test/gamma")
      expect(manifest.synthesis?.labels?.map((l) => l.label)).toEqual(["A", "B"])
      expect(manifest.synthesis?.labels?.map((l) => l.model).sort()).toEqual(["test/alpha", "test/gamma"])
      for (const { label, model } of manifest.synthesis?.labels ?? []) {
        const answer = model === "test/alpha" ? "alpha says 4" : "gamma says four"
        expect(user).toMatch(new RegExp(`Candidate ${label}\\n\\n<candidate label="${label}">\\n${answer}`))
      }
    }))

  itClock.effect("is ok when every candidate and the synthesizer answer; outcomes keep model order", () =>
    Effect.gen(function*() {
      // On the TestClock, each millisecond is a step of its own (advanceUntil): 2, 1 and 0 ms order the answers as
      // surely as 60, 30 and 0, and each step costs a few ms of real time.
      const { layer } = yield* setup({
        "test/alpha": [ok("slow", 2)],
        "test/beta": [ok("medium", 1)],
        "test/gamma": [ok("fast", 0)]
      })
      const finishedOrder: Array<string> = []
      const result = yield* runToEnd(
        runPipeline({
          prompt: "p",
          onEvent: (e) => Effect.sync(() => e._tag === "CandidateFinished" && finishedOrder.push(e.outcome.model))
        }).pipe(Effect.provide(layer))
      )
      expect(result.manifest.status).toBe("ok")
      expect(finishedOrder).toEqual(["test/gamma", "test/beta", "test/alpha"])
      expect(result.manifest.candidates.map((c) => c.model)).toEqual(["test/alpha", "test/beta", "test/gamma"])
    }))

  itClock.effect("fails without an answer when every candidate fails, and never calls the synthesizer", () =>
    Effect.gen(function*() {
      const unauthorized = (model: string): Step => ({ fail: new Unauthorized({ model, message: "HTTP 401: no key", httpStatus: 401 }) })
      const { client, layer } = yield* setup({
        "test/alpha": [unauthorized("test/alpha")],
        "test/beta": [{ fail: new ProviderFailure({ model: "test/beta", message: "HTTP 502", httpStatus: 502 }) }],
        "test/gamma": [unauthorized("test/gamma")]
      })
      const result = yield* runToEnd(runPipeline({ prompt: "p" }).pipe(Effect.provide(layer)))
      expect(result.final).toBeUndefined()
      const manifest = readManifest(result.runDir)
      expect(manifest.status).toBe("failed")
      expect(manifest.error).toBe("no candidate answered")
      expect(manifest.synthesis).toBeUndefined()
      expect(manifest.candidates[1]).toMatchObject({ status: "error", attempts: 4, error: { httpStatus: 502 } })
      expect(fs.existsSync(path.join(result.runDir, "final.md"))).toBe(false)
      expect((yield* Ref.get(client.requests)).some((r) => r.model === "test/synth")).toBe(false)
    }))

  itClock.effect("honours the concurrency bound", () =>
    Effect.gen(function*() {
      const models = ["m/1", "m/2", "m/3", "m/4", "m/5", "m/6", "m/7"]
      const { client, layer } = yield* setup(
        // Any delay on the TestClock keeps every call in flight until the clock moves: 1 ms is as good as 20.
        Object.fromEntries(models.map((m) => [m, [ok(m, 1)]])),
        { models, concurrency: 2 }
      )
      const result = yield* runToEnd(runPipeline({ prompt: "p" }).pipe(Effect.provide(layer)))
      expect(result.manifest.status).toBe("ok")
      expect(yield* Ref.get(client.maxInFlight)).toBe(2)
    }))

  it.live("runs the synthesis on a single answer", () =>
    Effect.gen(function*() {
      const { layer } = yield* setup({
        "test/alpha": [ok("only me")],
        "test/beta": [{ fail: new BadRequest({ model: "test/beta", message: "x", httpStatus: 400 }) }],
        "test/gamma": [{ fail: new BadRequest({ model: "test/gamma", message: "x", httpStatus: 400 }) }],
        "test/synth": [ok("merged")]
      })
      const result = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(layer))
      expect(result.final).toBe("merged")
      expect(result.manifest.synthesis?.labels).toEqual([{ label: "A", model: "test/alpha" }])
    }))

  it.live("falls back to the next synthesizer, then to the first answer with a notice", () =>
    Effect.gen(function*() {
      const failing = (model: string): Step => ({ fail: new BadRequest({ model, message: `HTTP 400: ${model} refused`, httpStatus: 400 }) })
      const first = yield* setup(
        { "test/synth": [failing("test/synth")], "test/backup": [ok("backup merged")] },
        { fallbackSynthesizers: ["test/backup"] }
      )
      const viaBackup = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(first.layer))
      expect(viaBackup.final).toBe("backup merged")
      expect(viaBackup.manifest.status).toBe("partial")
      expect(viaBackup.manifest.synthesis).toMatchObject({
        model: "test/backup",
        status: "ok",
        failedSynthesizers: [{ model: "test/synth", error: { tag: "BadRequest" } }]
      })

      const second = yield* setup(
        { "test/synth": [failing("test/synth")], "test/backup": [failing("test/backup")], "test/alpha": [ok("alpha's answer")] },
        { fallbackSynthesizers: ["test/backup"] }
      )
      const viaCandidate = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(second.layer))
      expect(viaCandidate.manifest.status).toBe("partial")
      expect(viaCandidate.final).toMatch(/^> \*\*Note:\*\* the synthesis failed \(HTTP 400: test\/backup refused\)/)
      expect(viaCandidate.final).toContain("`test/alpha` alone")
      expect(viaCandidate.final).toContain("alpha's answer")
      expect(viaCandidate.manifest.synthesis).toMatchObject({ status: "error", fallbackToCandidate: "test/alpha", file: "final.md" })
      expect(fs.readFileSync(path.join(viaCandidate.runDir, "final.md"), "utf8")).toBe(viaCandidate.final)
    }))

  it.live("uses the models and synthesizer given for one run", () =>
    Effect.gen(function*() {
      const { client, layer } = yield* setup({})
      const result = yield* runPipeline({ prompt: "p" }).pipe(
        withCallSettings({ models: ["x/one", "x/two"], synthesizer: "x/judge" }),
        Effect.provide(layer)
      )
      expect(result.manifest.settings.models).toEqual(["x/one", "x/two"])
      expect(result.manifest.settings.synthesizer).toBe("x/judge")
      expect((yield* Ref.get(client.requests)).map((r) => r.model).sort()).toEqual(["x/judge", "x/one", "x/two"])
    }))

  it.live("an interruption stops every call in flight and still reports the end of the run", () =>
    Effect.gen(function*() {
      const { client, layer } = yield* setup({
        "test/alpha": [ok("done early")],
        "test/beta": [{ hang: true }],
        "test/gamma": [{ hang: true }]
      })
      const firstAnswer = yield* Deferred.make<void>()
      const events: Array<RunEvent["_tag"]> = []
      const fiber = yield* runPipeline({
        prompt: "p",
        onEvent: (e) =>
          Effect.sync(() => events.push(e._tag)).pipe(
            Effect.zipRight(e._tag === "CandidateFinished" ? Deferred.succeed(firstAnswer, undefined) : Effect.void)
          )
      }).pipe(Effect.provide(layer), Effect.fork)
      yield* Deferred.await(firstAnswer)
      expect(yield* Ref.get(client.inFlight)).toBe(2)
      yield* Fiber.interrupt(fiber)
      // Both hanging calls were interrupted, not left running.
      expect(yield* Ref.get(client.inFlight)).toBe(0)
      // The answer came as a stream of parts: its text is reported (one delta) before it finishes.
      expect(events).toEqual(["RunStarted", "CandidateDelta", "CandidateFinished", "RunFinished"])
    }))

  it.live("an interrupted run's manifest on disk says cancelled", () =>
    Effect.gen(function*() {
      const outputDir = tempDir()
      const { layer } = yield* setup(
        { "test/alpha": [ok("done early")], "test/beta": [{ hang: true }], "test/gamma": [{ hang: true }] },
        { outputDir }
      )
      const firstAnswer = yield* Deferred.make<void>()
      const fiber = yield* runPipeline({
        prompt: "p",
        onEvent: (e) => (e._tag === "CandidateFinished" ? Deferred.succeed(firstAnswer, undefined) : Effect.void)
      }).pipe(Effect.provide(layer), Effect.fork)
      yield* Deferred.await(firstAnswer)
      yield* Fiber.interrupt(fiber)

      const [runId] = fs.readdirSync(outputDir)
      const runDir = path.join(outputDir, runId!)
      const manifest = readManifest(runDir)
      expect(manifest.status).toBe("cancelled")
      expect(manifest.error).toBe("interrupted before the answer")
      expect(manifest.candidates.map((c) => c.status)).toEqual(["ok", "cancelled", "cancelled"])
      expect(manifest.candidates[1]).toMatchObject({ attempts: 1, reason: "interrupted" })
      expect(fs.readFileSync(path.join(runDir, "responses/01-test-alpha.md"), "utf8")).toBe("done early")
      expect(fs.existsSync(path.join(runDir, "final.md"))).toBe(false)
      // Only whole files: no temporary leftovers.
      expect(fs.readdirSync(runDir).filter((f) => f.startsWith("."))).toEqual([])
    }))

  itClock.effect("an interruption during the synthesis records it as cancelled", () =>
    Effect.gen(function*() {
      const outputDir = tempDir()
      const { client, layer } = yield* setup({ "test/synth": [{ hang: true }] }, { outputDir })
      const synthesizing = yield* Deferred.make<void>()
      const fiber = yield* runPipeline({
        prompt: "p",
        onEvent: (e) => (e._tag === "SynthesisStarted" ? Deferred.succeed(synthesizing, undefined) : Effect.void)
      }).pipe(Effect.provide(layer), Effect.fork)
      yield* Deferred.await(synthesizing)
      // Interrupt once the synthesizer's request is out (the only call still in flight).
      yield* advanceUntil(Effect.map(Ref.get(client.inFlight), (n) => n === 1))
      yield* Fiber.interrupt(fiber)
      const manifest = readManifest(path.join(outputDir, fs.readdirSync(outputDir)[0]!))
      expect(manifest.status).toBe("cancelled")
      expect(manifest.candidates.every((c) => c.status === "ok")).toBe(true)
      expect(manifest.synthesis).toMatchObject({ model: "test/synth", status: "cancelled" })
    }))

  it.live("gives concurrent runs their own directories", () =>
    Effect.gen(function*() {
      const { layer } = yield* setup({})
      const results = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => runPipeline({ prompt: `prompt ${i}` })),
        { concurrency: "unbounded" }
      ).pipe(Effect.provide(layer))
      const dirs = new Set(results.map((r) => r.runDir))
      expect(dirs.size).toBe(8)
      const ids = results.map((r) => r.manifest.id)
      expect([...ids].sort()).toEqual(ids.slice().sort())
      for (const [i, r] of results.entries()) {
        expect(fs.readFileSync(path.join(r.runDir, "prompt.md"), "utf8")).toBe(`prompt ${i}`)
      }
    }))

  it.live("refuses before any call a prompt over the cap, or (with checkModels) an unknown model", () =>
    Effect.gen(function*() {
      const outputDir = tempDir()
      const big = yield* setup({}, { outputDir, maxPromptChars: 10 })
      const tooLong = yield* runPipeline({ prompt: "x".repeat(11) }).pipe(Effect.provide(big.layer), failureOf)
      expect(tooLong._tag).toBe("RunRefused")
      expect(tooLong.message).toMatch(/11 characters, more than the 10 allowed \(--max-prompt-chars\)/)

      const checked = yield* setup({}, { outputDir, checkModels: true })
      const unknown = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(checked.layer), failureOf)
      expect(unknown.message).toMatch(/unknown models at .*: test\/alpha, test\/beta, test\/gamma, test\/synth/)
      expect(yield* Ref.get(big.client.requests)).toEqual([])
      expect(yield* Ref.get(checked.client.requests)).toEqual([])
      expect(fs.readdirSync(outputDir)).toEqual([])
    }))

  itClock.effect(
    "starts the synthesis without waiting for the last answer's file, and writes the manifest after every file",
    () =>
      Effect.gen(function*() {
        const { client, layer, settings } = yield* setup({ "test/gamma": [ok("gamma, last", 1)] })
        const release = yield* Deferred.make<void>()
        const held = storeWithResponses((real) => (run, index, model, content, kind) =>
          model === "test/gamma"
            ? Deferred.await(release).pipe(Effect.zipRight(real(run, index, model, content, kind)))
            : real(run, index, model, content, kind)
        )
        const synthesisStarted = yield* Deferred.make<string>()
        const fiber = yield* runPipeline({
          prompt: "p",
          onEvent: (e) => (e._tag === "SynthesisStarted" ? Deferred.succeed(synthesisStarted, e.model) : Effect.void)
        }).pipe(Effect.provide(Layer.provideMerge(held, layer)), Effect.fork)

        yield* advanceUntil(Deferred.isDone(synthesisStarted))
        expect(yield* Deferred.await(synthesisStarted)).toBe("test/synth")
        // The synthesizer is asked while gamma's file is still being written: no manifest, no final answer yet.
        yield* advanceUntil(Effect.map(Ref.get(client.requests), (all) => all.some((r) => r.model === "test/synth")))
        const runDir = path.join(settings.outputDir, fs.readdirSync(settings.outputDir)[0]!)
        expect(fs.existsSync(path.join(runDir, "responses/03-test-gamma.md"))).toBe(false)
        expect(fs.existsSync(path.join(runDir, "run.json"))).toBe(false)
        expect(fs.existsSync(path.join(runDir, "final.md"))).toBe(false)

        yield* Deferred.succeed(release, undefined)
        yield* advanceUntil(Effect.map(Fiber.poll(fiber), (exit) => exit._tag === "Some"))
        const result = yield* Fiber.join(fiber)
        expect(result.manifest.status).toBe("ok")
        expect(result.manifest.candidates[2]).toMatchObject({ model: "test/gamma", status: "ok", file: "responses/03-test-gamma.md" })
        expect(fs.readFileSync(path.join(result.runDir, "responses/03-test-gamma.md"), "utf8")).toBe("gamma, last")
        expect(readManifest(result.runDir)).toEqual(result.manifest)
        expect(fs.readdirSync(result.runDir).sort()).toEqual(["final.md", "prompt.md", "responses", "run.json"])
      })
  )

  it.live("goes on when an answer cannot be written: that candidate records the write error, no temporary file stays", () =>
    Effect.gen(function*() {
      const { settings } = yield* setup({})
      const result = yield* runPipeline({ prompt: "p" }).pipe(
        Effect.provide(layerOnFullDisk(settings, (file) => file.includes("01-test-alpha.md")))
      )
      expect(result.final).toBe("synthesized")
      const manifest = readManifest(result.runDir)
      expect(manifest.status).toBe("partial")
      expect(manifest.candidates[0]).toMatchObject({
        model: "test/alpha",
        status: "ok",
        writeError: expect.stringMatching(/no space left on device/)
      })
      expect(manifest.candidates[0]!.file).toBeUndefined()
      expect(manifest.candidates[1]).toMatchObject({ status: "ok", file: "responses/02-test-beta.md" })
      expect(manifest.unwritten).toEqual([{
        file: "responses/01-test-alpha.md",
        message: expect.stringMatching(/no space left on device/)
      }])
      expect(manifest.synthesis).toMatchObject({ status: "ok", file: "final.md" })
      expect(fs.readdirSync(path.join(result.runDir, "responses")).sort()).toEqual(["02-test-beta.md", "03-test-gamma.md"])
      expect(fs.readFileSync(path.join(result.runDir, "final.md"), "utf8")).toBe("synthesized")
    }))

  itClock.effect(
    "sends the first calls before the owner record lands, which is written before the manifest all the same",
    () =>
      Effect.gen(function*() {
        const { client, layer, settings } = yield* setup({})
        const release = yield* Deferred.make<void>()
        const held = Layer.effect(
          RunStore,
          Effect.map(RunStore, (real) => ({
            ...real,
            writeOwner: (...args: Parameters<RunStore["writeOwner"]>) =>
              Deferred.await(release).pipe(Effect.zipRight(real.writeOwner(...args)))
          }))
        )
        const fiber = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(Layer.provideMerge(held, layer)), Effect.fork)
        // Every candidate is asked while the owner record is still being written.
        yield* advanceUntil(Effect.map(Ref.get(client.requests), (all) => all.length >= 3))
        const runDir = path.join(settings.outputDir, fs.readdirSync(settings.outputDir)[0]!)
        expect(fs.existsSync(path.join(runDir, "owner.json"))).toBe(false)
        // The run may go as far as its synthesis, but its manifest waits for the owner record.
        expect(fs.existsSync(path.join(runDir, "run.json"))).toBe(false)
        yield* Deferred.succeed(release, undefined)
        yield* advanceUntil(Effect.map(Fiber.poll(fiber), (exit) => exit._tag === "Some"))
        const result = yield* Fiber.join(fiber)
        expect(result.manifest.status).toBe("ok")
        // Written, then removed once the manifest landed.
        expect(fs.readdirSync(result.runDir).sort()).toEqual(["final.md", "prompt.md", "responses", "run.json"])
      })
  )

  it.live("goes on, whole, when the owner record cannot be written: it is for readers, not part of the answer", () =>
    Effect.gen(function*() {
      const { settings } = yield* setup({})
      // The owner record's writes the full disk refused: one, or this test would prove nothing.
      const refused: Array<string> = []
      const ownerRecord = (file: string) => file.includes(".owner.json.") && refused.push(file) > 0
      const result = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(layerOnFullDisk(settings, ownerRecord)))
      expect(refused).toHaveLength(1)
      const manifest = readManifest(result.runDir)
      expect(manifest.status).toBe("ok")
      expect(manifest.unwritten).toBeUndefined()
      expect(result.final).toBe("synthesized")
      expect(fs.readdirSync(result.runDir).sort()).toEqual(["final.md", "prompt.md", "responses", "run.json"])
    }))

  it.live("returns the final answer when final.md cannot be written, and the manifest does not name it", () =>
    Effect.gen(function*() {
      const { settings } = yield* setup({})
      const result = yield* runPipeline({ prompt: "p" }).pipe(
        Effect.provide(layerOnFullDisk(settings, (file) => file.includes(".final.md.")))
      )
      expect(result.final).toBe("synthesized")
      const manifest = readManifest(result.runDir)
      expect(manifest).toEqual(result.manifest)
      expect(manifest.status).toBe("partial")
      expect(manifest.synthesis?.file).toBeUndefined()
      expect(manifest.synthesis?.writeError).toMatch(/no space left on device/)
      expect(fs.readdirSync(result.runDir).sort()).toEqual(["prompt.md", "responses", "run.json"])
    }))
})
