import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Manifest } from "../../src/domain/manifest.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { rank } from "../../src/programs/strategies/rank.js"
import { refine } from "../../src/programs/strategies/refine.js"
import { type StrategyName, strategyNames } from "../../src/programs/strategies/registry.js"
import { isRecordOf, knownRecord, registry, strategyCalls } from "../../src/programs/strategies/registry.js"
import { synthesize } from "../../src/programs/strategies/synthesize.js"
import type { SettingsValue } from "../../src/settings/values.js"

import type { RunRequest } from "../../src/programs/run/request.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { PerCallValues } from "../../src/settings/perCall.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { recordOf } from "../support/strategyRecord.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"

// Every strategy through the registry: its plan, its record, what eval compares, and its step in a run
// (in process: scripted models, runs in memory), and the manifests today's runs on disk already hold.

const tempDir = makeTempDirs("pllm-strategy-records-")
const settings = (overrides: Partial<SettingsValue> = {}) => makeTestSettings(overrides)
const models = ["test/alpha", "test/beta", "test/gamma"]

describe("the strategy registry", () => {
  it("has a module for each name the settings accept, under its own name, and no other", () => {
    expect(Object.keys(registry).sort()).toEqual([...strategyNames].sort())
    for (const name of strategyNames) expect(registry[name].name).toBe(name)
  })

  it("does not compile without a module for every name", () => {
    // @ts-expect-error `self` is a name the settings accept: the registry's type requires its module.
    const missing: typeof registry = { synthesize, rank, refine }
    expect(Object.keys(missing)).not.toContain("self")
  })

  it("plans each strategy's candidates and calls from the settings", () => {
    const plan = (name: StrategyName, overrides: Partial<SettingsValue> = {}, panel?: ReadonlyArray<string>) =>
      registry[name].plan({ settings: settings(overrides), models, panel })
    expect(plan("synthesize")).toEqual({ candidates: models, steps: { models: [], rounds: 0 } })
    // rank: the judges (`--judge`), else the panel, else the candidates; once each.
    expect(plan("rank").steps).toEqual({ models, rounds: 1 })
    expect(plan("rank", {}, ["p/one"]).steps).toEqual({ models: ["p/one"], rounds: 1 })
    expect(plan("rank", { judges: Option.some(["j/one", "j/two"]) }, ["p/one"]).steps).toEqual({ models: ["j/one", "j/two"], rounds: 1 })
    // refine: the panel (else the candidates), `rounds` times.
    expect(plan("refine", { rounds: 3 })).toEqual({ candidates: models, steps: { models, rounds: 3 } })
    expect(plan("refine", {}, ["p/one"]).steps).toEqual({ models: ["p/one"], rounds: 1 })
    // self: the first model, once per sample, and no call of its own.
    expect(plan("self", { samples: 3 })).toEqual({
      candidates: ["test/alpha", "test/alpha", "test/alpha"],
      steps: { models: [], rounds: 0 }
    })
  })

  it("gives each strategy's record, refusal and warning", () => {
    const plan = (name: StrategyName) => registry[name].plan({ settings: settings({ samples: 2 }), models })
    for (const name of strategyNames) expect(registry[name].record(plan(name)).name).toBe(name)
    expect(registry.synthesize.record(plan("synthesize"))).toEqual({ name: "synthesize" })
    expect(registry.rank.record(plan("rank"))).toEqual({ name: "rank" })
    expect(registry.refine.record(plan("refine"))).toEqual({ name: "refine" })
    expect(registry.self.record(plan("self"))).toEqual({ name: "self", model: "test/alpha", samples: 2 })
    const tooMany = settings({ samples: 9, maxModels: 8 })
    expect(registry.self.refusal(plan("self"), tooMany)).toBe("--samples 9: more answers than the 8 one run may have (--max-models)")
    expect(strategyNames.filter((name) => registry[name].refusal(plan(name), tooMany) !== undefined)).toEqual(["self"])
    expect(registry.self.warning(["a/one", "b/two"])).toBe("strategy self samples a/one only: b/two not asked")
    expect(registry.self.warning(["a/one"])).toBeUndefined()
    expect(strategyNames.filter((name) => registry[name].warning(["a/one", "b/two"]) !== undefined)).toEqual(["self"])
    expect(strategyNames.filter((name) => registry[name].samples)).toEqual(["self"])
  })

  it("says what eval compares: the fingerprint's extras and whether a recorded run fits", () => {
    const s = settings({ rounds: 2, samples: 3, judges: Option.some(["j/one"]) })
    const plan = (name: StrategyName) => registry[name].plan({ settings: s, models })
    expect(registry.synthesize.fingerprint(plan("synthesize"), s)).toEqual({})
    expect(registry.rank.fingerprint(plan("rank"), s)).toEqual({ judges: ["j/one"] })
    expect(registry.refine.fingerprint(plan("refine"), s)).toEqual({ refiners: models, rounds: 2 })
    expect(registry.self.fingerprint(plan("self"), s)).toEqual({ sampled: "test/alpha", samples: 3 })
    const judged = (model: string) => ({ model, status: "ok" as const, attempts: 1 })
    expect(registry.rank.fits({ name: "rank", judges: [judged("j/one")] }, plan("rank"))).toBe(true)
    expect(registry.rank.fits({ name: "rank", judges: [judged("j/two")] }, plan("rank"))).toBe(false)
    const round = (n: number) => ({ round: n, answers: models.map(judged) })
    expect(registry.refine.fits({ name: "refine", rounds: [round(2), round(3)] }, plan("refine"))).toBe(true)
    expect(registry.refine.fits({ name: "refine", rounds: [round(2)] }, plan("refine"))).toBe(false)
  })
})

/** A run in process: scripted models (each judge ranks), the run kept in memory. */
const runWith = (request: RunRequest, overrides: Partial<SettingsValue> = {}, call: PerCallValues = {}) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({
      "test/alpha": [{ answer: "alpha says 4. RANKING: A > B > C" }],
      "test/beta": [{ answer: "beta says 4. RANKING: B > C > A" }],
      "test/gamma": [{ answer: "gamma says 5. RANKING: C > A > B" }],
      "test/synth": [{ answer: "It is 4." }]
    })
    const store = makeTestRunStore()
    const runSettings = settings({ retryBaseDelayMs: 1, ...overrides })
    const result = yield* runPipeline(request).pipe(
      withCallSettings(call),
      Effect.provide(Layer.mergeAll(client.layer, store.layer, Settings.Test(runSettings)))
    )
    const asked = (yield* Ref.get(client.requests)).map((r) => r.model)
    return { result, asked, store }
  })

describe("each strategy in a run, through the registry", () => {
  itLive.effect("makes the calls its plan says, then records its step in the manifest", () =>
    Effect.gen(function*() {
      for (const name of strategyNames) {
        const { asked, result } = yield* runWith({ prompt: "What is 2+2?" }, { strategy: name, samples: 2 })
        const plan = registry[name].plan({ settings: settings({ samples: 2 }), models })
        const steps = Array.from({ length: plan.steps.rounds }, () => plan.steps.models).flat()
        expect(asked.sort(), name).toEqual([...plan.candidates, ...steps, "test/synth"].sort())
        expect(result.manifest.strategy?.name).toBe(name)
        expect(result.final).toBe("It is 4.")
        // What the run recorded is a member of the manifest's union, as it will be read back.
        expect(Schema.decodeUnknownSync(Manifest)(Schema.encodeSync(Manifest)(result.manifest))).toEqual(result.manifest)
      }
    }))

  itLive.effect(
    "rank orders the answers by the judges' count; refine's rounds and self's samples come from the call",
    () =>
      Effect.gen(function*() {
        const ranked = yield* runWith({ prompt: "p" }, {}, { strategy: "rank" })
        const points = recordOf(ranked.result.manifest, "rank").aggregate?.map((a) => a.points) ?? []
        expect(points).toHaveLength(3)
        expect([...points].sort((a, b) => b - a)).toEqual(points)
        expect(recordOf(ranked.result.manifest, "rank").judges?.map((j) => j.ranking !== undefined)).toEqual([true, true, true])
        // The call's own rounds and samples win over the settings' (one place: the call's settings patch).
        const refined = yield* runWith({ prompt: "p" }, { rounds: 1 }, { strategy: "refine", rounds: 2 })
        expect(recordOf(refined.result.manifest, "refine").rounds?.map((r) => r.round)).toEqual([2, 3])
        expect(refined.asked).toHaveLength(3 + 3 * 2 + 1)
        const sampled = yield* runWith({ prompt: "p" }, {}, { strategy: "self", samples: 3, models: ["test/beta", "test/gamma"] })
        expect(sampled.result.manifest.strategy).toEqual({ name: "self", model: "test/beta", samples: 3 })
        expect(sampled.asked).toEqual(["test/beta", "test/beta", "test/beta", "test/synth"])
      })
  )

  itLive.effect("refuses self's samples over --max-models before any call", () =>
    Effect.gen(function*() {
      const refused = yield* runWith({ prompt: "p" }, { strategy: "self", samples: 9, maxModels: 8 }).pipe(Effect.flip)
      expect(refused.message).toBe("--samples 9: more answers than the 8 one run may have (--max-models)")
    }))
})

describe("the manifest's strategy record: open below the programs, narrowed by the registry", () => {
  const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join("test/fixtures/manifests", `${name}.json`), "utf8"))

  it("decodes the manifests runs of each strategy wrote before it was a union, every field kept", () => {
    for (const name of ["synthesize", "rank", "refine", "self"]) {
      const raw = fixture(name)
      const manifest = Schema.decodeUnknownSync(Manifest)(raw)
      expect(manifest.strategy?.name).toBe(name)
      expect(manifest.strategy).toEqual(raw.strategy)
      expect(Schema.encodeSync(Manifest)(manifest).strategy).toEqual(raw.strategy)
    }
    const rankRecord = recordOf(Schema.decodeUnknownSync(Manifest)(fixture("rank")), "rank")
    expect(rankRecord.judges?.map((j) => j.model)).toEqual(["test/alpha", "test/beta"])
  })

  itLive.effect(
    "reads back and writes again, through the run store, every field a run of each strategy wrote",
    () =>
      Effect.gen(function*() {
        const store = yield* RunStore
        const newer = { name: "vote", ballots: [{ model: "test/alpha", votes: 2 }], degraded: "one ballot" }
        const written = [...["synthesize", "rank", "refine", "self"].map(fixture), { ...fixture("self"), strategy: newer }]
        for (const raw of written) {
          const run = yield* store.makeRunDir()
          fs.writeFileSync(path.join(run.dir, "run.json"), JSON.stringify({ ...raw, id: run.id }))
          const read = yield* store.readManifest(run.id)
          expect(read.strategy).toEqual(raw.strategy)
          const again = yield* store.makeRunDir()
          yield* store.writeManifest(again, { ...read, id: again.id })
          expect(JSON.parse(fs.readFileSync(path.join(again.dir, "run.json"), "utf8")).strategy).toEqual(raw.strategy)
          expect((yield* store.readManifest(again.id)).strategy).toEqual(raw.strategy)
        }
      }).pipe(Effect.provide(RunStore.Test(tempDir())))
  )

  it("keeps a record of a strategy it does not know, and fields no strategy reads; the registry tells them apart", () => {
    const decode = Schema.decodeUnknownSync(Manifest)
    const raw = fixture("self")
    // A strategy of a newer version, with fields of its own: read and written again as it is.
    const newer = { name: "vote", ballots: [{ model: "test/alpha", votes: 2 }], note: "two votes" }
    const kept = decode({ ...raw, strategy: newer })
    expect(kept.strategy).toEqual(newer)
    expect(Schema.encodeSync(Manifest)(kept).strategy).toEqual(newer)
    expect(knownRecord(kept.strategy)).toBeUndefined()
    expect(strategyCalls(kept.strategy)).toEqual([])
    // Another's fields under a name: kept as written, but no record of that strategy.
    const wrong = decode({ ...raw, strategy: { name: "self", samples: "3" } })
    expect(wrong.strategy).toEqual({ name: "self", samples: "3" })
    expect(isRecordOf("self")(wrong.strategy)).toBe(false)
    expect(knownRecord(decode(raw).strategy)).toEqual(raw.strategy)
    // The fields every strategy shares are still checked.
    expect(Either.isLeft(Schema.decodeUnknownEither(Manifest)({ ...raw, strategy: { name: "self", note: 3 } }))).toBe(true)
  })
})
