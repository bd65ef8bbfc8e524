import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Logger, Option, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach } from "vitest"
import { Manifest } from "../../src/domain/manifest.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import type { RunEvent, RunRequest } from "../../src/programs/run/request.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { JUDGE_INSTRUCTIONS } from "../../src/programs/strategies/rank.js"
import { REFINE_INSTRUCTIONS } from "../../src/programs/strategies/refine.js"
import type { PerCallValues } from "../../src/settings/perCall.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { failureOf } from "../support/failureOf.js"
import type { RecordedRequest } from "../support/fakeOpenRouter.js"
import { itClock } from "../support/itClock.js"
import { recordOf } from "../support/strategyRecord.js"
import { tempRoot } from "../support/tempDirs.js"
import { waitFor } from "../support/waitFor.js"
import { appLayerOver, withFakeProvider } from "../support/withFakeProvider.js"

// Each strategy against the loopback provider, through the real client, call path and run store: the calls
// it sends (how many, to whom, with what), what it keeps on disk, and what its manifest says.

const provider = withFakeProvider()
const { root: tmp } = tempRoot("pllm-strategies-")

beforeEach(() => {
  provider.fake.setScript({})
  provider.fake.reset()
})

/** A run, with a call's own settings (as an MCP call gives them) over `overrides` of the test settings. */
const run = ({ deadline, models, rounds, strategy, ...request }: RunRequest & PerCallValues, overrides: Partial<SettingsValue> = {}) => {
  const settings = provider.settings({
    apiKey: Option.none(),
    outputDir: fs.mkdtempSync(path.join(tmp, "runs-")),
    retries: 0,
    logLevel: "error",
    ...overrides
  })
  return runPipeline(request).pipe(
    withCallSettings({ deadline, models, rounds, strategy }),
    Effect.provide(appLayerOver(settings)),
    Effect.provide(Logger.remove(Logger.defaultLogger))
  )
}

const manifestIn = (runDir: string) =>
  Schema.decodeUnknownSync(Manifest)(JSON.parse(fs.readFileSync(path.join(runDir, "run.json"), "utf8")))

/** The messages of a chat request, as one text (what the model read). */
const textOf = (request: RecordedRequest) => JSON.stringify((request.body as { messages: unknown }).messages)
const systemOf = (request: RecordedRequest) => (request.body as { messages: ReadonlyArray<{ content: string }> }).messages[0]?.content
const to = (model: string) => provider.log().filter((r) => r.model === model)

const ok = (content: string) => ({ kind: "ok" as const, content })
const candidates = { "test/alpha": ok("alpha thinks 4"), "test/beta": ok("beta thinks 5"), "test/gamma": ok("gamma thinks 4") }

describe("strategy rank", () => {
  it.live("judges rank the anonymised answers; Borda picks the order the synthesizer gets; a failing or unreadable judge is recorded, not counted", () =>
    Effect.gen(function*() {
      provider.fake.setScript({
        ...candidates,
        "jd/one": ok("A is right, C too.\nRANKING: A > B > C"),
        "jd/two": ok("{\"ranking\": [\"A\", \"C\", \"B\"]}"),
        "jd/down": { kind: "status", status: 400 },
        "jd/vague": ok("They all have merit."),
        "test/synth": ok("It is 4.")
      })
      const events: Array<string> = []
      const result = yield* run(
        { prompt: "What is 2+2?", strategy: "rank", onEvent: (e: RunEvent) => Effect.sync(() => events.push(e._tag)) },
        { judges: Option.some(["jd/one", "jd/two", "jd/down", "jd/vague"]) }
      )

      expect(result.final).toBe("It is 4.")
      // 3 candidates, 4 judges, 1 synthesis.
      expect(provider.log()).toHaveLength(8)
      for (const judge of ["jd/one", "jd/two", "jd/down", "jd/vague"]) {
        const [request] = to(judge)
        expect(systemOf(request!)).toBe(JUDGE_INSTRUCTIONS)
        // Every answer, and not a single model id.
        for (const content of ["alpha thinks 4", "beta thinks 5", "gamma thinks 4"]) expect(textOf(request!)).toContain(content)
        expect(textOf(request!)).not.toMatch(/test\/(alpha|beta|gamma)|jd\//)
      }

      const manifest = manifestIn(result.runDir)
      expect(manifest).toEqual(result.manifest)
      const strategy = recordOf(manifest, "rank")
      expect(strategy.name).toBe("rank")
      const modelOf = (label: string) => strategy.labels!.find((l) => l.label === label)!.model
      expect(strategy.judges!.map((j) => [j.model, j.status, j.ranking, j.unparsed === undefined])).toEqual([
        ["jd/one", "ok", ["A", "B", "C"], true],
        ["jd/two", "ok", ["A", "C", "B"], true],
        ["jd/down", "error", undefined, false],
        ["jd/vague", "ok", undefined, false]
      ])
      expect(strategy.judges![3]!.unparsed).toMatch(/no "RANKING:" line/)
      // The judges read the answers in turn, so that none is always read first (position bias).
      const firstShown = ["jd/one", "jd/two", "jd/down"].map((judge) => /## Candidate ([A-Z])/.exec(textOf(to(judge)[0]!))?.[1])
      expect(firstShown).toEqual(["A", "B", "C"])
      expect(strategy.aggregate).toEqual([
        { label: "A", model: modelOf("A"), points: 1 },
        { label: "B", model: modelOf("B"), points: 0.25 },
        { label: "C", model: modelOf("C"), points: 0.25 }
      ])
      // Each judge's answer is on disk; the one that failed has none.
      expect(fs.readFileSync(path.join(result.runDir, "rankings/01-jd-one.md"), "utf8")).toContain("RANKING: A > B > C")
      expect(strategy.judges![2]!.file).toBeUndefined()
      // Each judge's record says what it was sent, answered or failed, like a candidate's.
      for (const judge of strategy.judges!) expect(judge.options).toMatchObject({ temperature: expect.any(Number) })

      // The synthesizer got the answers best first, with the ranking.
      const synthText = textOf(to("test/synth")[0]!)
      const contentOf = (model: string) => candidates[model as keyof typeof candidates].content
      const positions = ["A", "B", "C"].map((label) => synthText.indexOf(contentOf(modelOf(label))))
      expect(positions).toEqual([...positions].sort((a, b) => a - b))
      expect(synthText).toContain("How other models ranked the candidates")
      expect(synthText).toContain("Candidate A: 1 over 2 rankings, 2 first")

      // Judges are paid for like any call, and counted: a judge that failed makes the run partial, not failed.
      expect(manifest.status).toBe("partial")
      expect(manifest.usage.cost).toBeCloseTo(0.0001 * 7, 10)
      expect(events).toContain("StrategyStep")
    }))

  it.live("the synthesizer sees the answers best first under the judges' labels, so rankings and report agree on what \"A\" is", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ ...candidates, "jd/one": ok("RANKING: C > B > A"), "test/synth": ok("It is 4.") })
      const result = yield* run({ prompt: "What is 2+2?", strategy: "rank" }, { judges: Option.some(["jd/one"]) })
      const strategy = recordOf(result.manifest, "rank")
      expect(strategy.aggregate!.map((s) => s.label)).toEqual(["C", "B", "A"])
      // The synthesis's labels are the judges' labels, for the same models, in the ranked order.
      expect(result.manifest.synthesis?.labels).toEqual(strategy.aggregate!.map(({ label, model }) => ({ label, model })))
      const synthText = textOf(to("test/synth")[0]!)
      const shown = [...synthText.matchAll(/## Candidate ([A-Z])/g)].map((m) => m[1])
      expect(shown).toEqual(["C", "B", "A"])
      expect(synthText).toContain("- Candidate C: 1 over 1 ranking, 1 first")
      // The instructions agree: random order, unless the prompt says how the answers were ordered, as it does here.
      const system = systemOf(to("test/synth")[0]!)
      expect(system).toContain("They are shown in random order unless the prompt says how they were ordered.")
      expect(synthText).toContain("best ranked first, under the labels the judges saw")
    }))

  it.live("a judge's tie (`C = A`) is recorded with its ranking and scored at the places' mean", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ ...candidates, "jd/one": ok("RANKING: C = A > B (B is weakest)"), "test/synth": ok("It is 4.") })
      const result = yield* run({ prompt: "What is 2+2?", strategy: "rank" }, { judges: Option.some(["jd/one"]) })
      const strategy = recordOf(result.manifest, "rank")
      expect(strategy.judges!.map((j) => [j.ranking, j.tied])).toEqual([[["C", "A", "B"], [["C", "A"]]]])
      expect(strategy.aggregate!.map((s) => [s.label, s.points])).toEqual([["A", 0.75], ["C", 0.75], ["B", 0]])
    }))

  it.live("judges read the question as the candidates were asked it: an attached text file included", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ ...candidates, "jd/one": ok("RANKING: A > B > C"), "test/synth": ok("It is 4.") })
      const text = "const answer = 4 // from the attached file"
      const bytes = new TextEncoder().encode(text)
      yield* run(
        {
          prompt: "What does notes.ts compute?",
          strategy: "rank",
          attachments: [{ path: "notes.ts", kind: "text", mediaType: "text/plain", bytes, sha256: "0".repeat(64), text }]
        },
        { judges: Option.some(["jd/one"]) }
      )
      expect(textOf(to("jd/one")[0]!)).toContain("from the attached file")
    }))

  it.live("by default the candidates judge, and none ranks its own answer", () =>
    Effect.gen(function*() {
      const twice = (answer: string) => [ok(answer), ok("RANKING: A > B > C")]
      provider.fake.setScript({
        "test/alpha": twice("alpha thinks 4"),
        "test/beta": twice("beta thinks 5"),
        "test/gamma": twice("gamma thinks 4"),
        "test/synth": ok("It is 4.")
      })
      const result = yield* run({ prompt: "What is 2+2?", strategy: "rank" })
      const strategy = recordOf(result.manifest, "rank")
      expect(result.manifest.status).toBe("ok")
      for (const judge of strategy.judges!) {
        const own = strategy.labels!.filter((l) => l.model === judge.model).map((l) => l.label)
        expect(judge.ownLabels).toEqual(own)
        expect(judge.ranking).toEqual(["A", "B", "C"].filter((l) => !own.includes(l)))
      }
      // Each judge ranks the two answers not its own, 1 and 0; each answer is on the two other judges' ballots.
      expect(strategy.aggregate!.map((s) => [s.label, s.points])).toEqual([["A", 1], ["B", 0.5], ["C", 0]])
    }))
})

describe("strategy steps under a deadline and a cancel", () => {
  itClock.effect(
    "a judge that hangs is cut in time for the synthesis under --deadline; the run still answers",
    () =>
      Effect.gen(function*() {
        provider.fake.setScript({
          ...candidates,
          "jd/one": ok("RANKING: B > A > C"),
          "jd/slow": { kind: "hang" },
          "test/synth": ok("It is 4.")
        })
        const oneJudgeDone = yield* Effect.makeLatch(false)
        const fiber = yield* Effect.fork(run(
          {
            prompt: "What is 2+2?",
            strategy: "rank",
            deadline: 1.5,
            onEvent: (e: RunEvent) => e._tag === "StrategyStep" && e.message.startsWith("ranking: 1/2") ? oneJudgeDone.open : Effect.void
          },
          { judges: Option.some(["jd/one", "jd/slow"]) }
        ))
        // On the TestClock, once only the hanging judge is left: past the cut (60 % of the deadline, 0.9 s), short of
        // the deadline itself, which the synthesis then has left.
        yield* oneJudgeDone.await
        yield* TestClock.adjust("1 second")
        const result = yield* Fiber.join(fiber)
        expect(result.final).toBe("It is 4.")
        expect(recordOf(result.manifest, "rank").judges?.map((j) => [j.model, j.status])).toEqual([["jd/one", "ok"], [
          "jd/slow",
          "timeout"
        ]])
        expect(recordOf(result.manifest, "rank").aggregate?.[0]).toMatchObject({ label: "B", points: 1 })
        expect(provider.fake.abortedRequests().map((r) => r.model)).toEqual(["jd/slow"])
      })
  )

  it.live("a cancel while the judges rank aborts their calls and leaves a cancelled manifest that records them", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ ...candidates, "jd/slow": { kind: "hang" } })
      let runDir = ""
      const fiber = yield* Effect.fork(run(
        {
          prompt: "What is 2+2?",
          strategy: "rank",
          onEvent: (e: RunEvent) => Effect.sync(() => e._tag === "RunStarted" && (runDir = e.run.dir))
        },
        { judges: Option.some(["jd/slow"]) }
      ))
      yield* Effect.promise(() => provider.fake.waitForRequests(4))
      yield* Fiber.interrupt(fiber)
      const manifest = manifestIn(runDir)
      expect(manifest.status).toBe("cancelled")
      expect(recordOf(manifest, "rank").judges).toEqual([{ model: "jd/slow", status: "cancelled", reason: "interrupted", attempts: 0 }])
      expect(to("test/synth")).toHaveLength(0)
      yield* Effect.promise(() => waitFor("the judge's request aborted", () => provider.fake.abortedRequests().length === 1))
    }))
})

describe("strategy refine", () => {
  it.live("each round, every model sees the previous round's answers anonymised; the last round is synthesized; every round stays on disk", () =>
    Effect.gen(function*() {
      provider.fake.setScript({
        "test/alpha": [ok("alpha round 1"), ok("alpha round 2"), ok("alpha round 3")],
        "test/beta": [ok("beta round 1"), ok("beta round 2"), ok("beta round 3")],
        "test/synth": ok("merged")
      })
      const result = yield* run({ prompt: "Explain tides.", models: ["test/alpha", "test/beta"], strategy: "refine", rounds: 2 })

      // 2 candidates, 2 refinements in each of 2 rounds, 1 synthesis.
      expect(provider.log()).toHaveLength(7)
      for (const model of ["test/alpha", "test/beta"]) {
        const [first, second, third] = to(model)
        expect(textOf(first!)).not.toContain("round")
        expect(systemOf(second!)).toBe(REFINE_INSTRUCTIONS)
        expect(textOf(second!)).toContain("alpha round 1")
        expect(textOf(second!)).toContain("beta round 1")
        expect(textOf(third!)).toContain("alpha round 2")
        expect(textOf(third!)).not.toContain("round 1")
        for (const r of [second, third]) expect(textOf(r!)).not.toMatch(/test\/(alpha|beta)/)
      }
      const synthText = textOf(to("test/synth")[0]!)
      expect(synthText).toContain("alpha round 3")
      expect(synthText).not.toContain("round 2")

      const manifest = manifestIn(result.runDir)
      expect(manifest.status).toBe("ok")
      expect(recordOf(manifest, "refine").rounds?.map((r) => [r.round, r.answers.map((a) => [a.model, a.status, a.file])])).toEqual([
        [2, [["test/alpha", "ok", "rounds/2/01-test-alpha.md"], ["test/beta", "ok", "rounds/2/02-test-beta.md"]]],
        [3, [["test/alpha", "ok", "rounds/3/01-test-alpha.md"], ["test/beta", "ok", "rounds/3/02-test-beta.md"]]]
      ])
      expect(fs.readFileSync(path.join(result.runDir, "responses/01-test-alpha.md"), "utf8")).toBe("alpha round 1")
      expect(fs.readFileSync(path.join(result.runDir, "rounds/2/02-test-beta.md"), "utf8")).toBe("beta round 2")
      expect(manifest.usage.cost).toBeCloseTo(0.0001 * 7, 10)
    }))

  it.live("a refinement that fails keeps the round going without it; a round with no answer leaves the one before", () =>
    Effect.gen(function*() {
      provider.fake.setScript({
        "test/alpha": [ok("alpha round 1"), { kind: "status", status: 400 }],
        "test/beta": [ok("beta round 1"), { kind: "status", status: 400 }],
        "test/synth": ok("merged")
      })
      const result = yield* run({ prompt: "Explain tides.", models: ["test/alpha", "test/beta"], strategy: "refine" })
      expect(result.final).toBe("merged")
      expect(result.manifest.status).toBe("partial")
      expect(result.manifest.strategy?.note).toMatch(/round 2: no model answered/)
      expect(textOf(to("test/synth")[0]!)).toContain("alpha round 1")
    }))
})

describe("strategy self", () => {
  it.live("asks the first model N times, at the configured temperature, and synthesizes the samples", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "test/alpha": [ok("sample 1"), ok("sample 2"), ok("sample 3")], "test/synth": ok("merged") })
      const result = yield* run({ prompt: "Name a colour.", strategy: "self" }, { samples: 3, temperature: 1.1 })

      expect(to("test/alpha")).toHaveLength(3)
      expect(to("test/beta")).toHaveLength(0)
      expect(to("test/gamma")).toHaveLength(0)
      for (const r of to("test/alpha")) expect((r.body as { temperature: number }).temperature).toBe(1.1)
      const manifest = manifestIn(result.runDir)
      expect(manifest.strategy).toEqual({ name: "self", model: "test/alpha", samples: 3 })
      expect(manifest.candidates.map((c) => c.file)).toEqual([
        "responses/01-test-alpha.md",
        "responses/02-test-alpha.md",
        "responses/03-test-alpha.md"
      ])
      const synthText = textOf(to("test/synth")[0]!)
      for (const sample of ["sample 1", "sample 2", "sample 3"]) expect(synthText).toContain(sample)
    }))
})

describe("strategy self, refused", () => {
  it.live("more samples than --max-models is refused before any call", () =>
    Effect.gen(function*() {
      const refused = yield* run({ prompt: "Hi", strategy: "self" }, { samples: 20, maxModels: 16 }).pipe(failureOf)
      expect(refused.message).toBe("--samples 20: more answers than the 16 one run may have (--max-models)")
      expect(provider.log()).toHaveLength(0)
    }))
})

describe("strategy synthesize", () => {
  it.live("is the default, and the manifest says so", () =>
    Effect.gen(function*() {
      const result = yield* run({ prompt: "Hi" })
      expect(provider.log()).toHaveLength(4)
      expect(result.manifest.strategy).toEqual({ name: "synthesize" })
    }))
})
