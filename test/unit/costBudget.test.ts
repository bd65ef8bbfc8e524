import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Ref, TestClock } from "effect"
import type { ModelInfo } from "../../src/domain/modelCall.js"
import { REPORT_INSTRUCTIONS, SYNTHESIZER_INSTRUCTIONS } from "../../src/programs/buildSynthesisPrompt.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { STEP_INSTRUCTION_TOKENS, SYNTHESIS_INSTRUCTION_TOKENS, worstCaseCost } from "../../src/programs/checkRunRequest.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { JUDGE_INSTRUCTIONS } from "../../src/programs/strategies/rank.js"
import { REFINE_INSTRUCTIONS } from "../../src/programs/strategies/refine.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { itClock } from "../support/itClock.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { runToEnd } from "../support/testClock.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"
import { providerLayer } from "../support/withFakeProvider.js"

const tempDir = makeTempDirs("parallel-llm-checks-")

// Prices per million tokens: $1 in, $2 out; context 10,000 tokens.
const priced = (id: string): ModelInfo => ({ id, contextLength: 10_000, promptPrice: 1, completionPrice: 2 })
const catalogue = ["test/alpha", "test/beta", "test/gamma", "test/synth"].map(priced)

const run = (overrides: Partial<SettingsValue>, prompt = "x".repeat(3_000)) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({}, { answer: "fine" }, catalogue)
    const store = makeTestRunStore()
    const layer = Layer.mergeAll(client.layer, store.layer, Settings.Test(makeTestSettings(overrides)))
    const exit = yield* runPipeline({ prompt }).pipe(Effect.provide(layer), Effect.either)
    return { exit, requests: yield* Ref.get(client.requests), store }
  })

describe("the cost budget (--max-cost)", () => {
  it("estimates the worst case from the prompt, max_tokens and the prices", () => {
    const estimate = worstCaseCost({
      promptChars: 3_000, // 1,000 tokens at most
      models: ["test/alpha", "test/beta"],
      synthesizer: "test/synth",
      maxTokens: 500,
      synthesisMaxChars: 400_000,
      catalogue: new Map(catalogue.map((m) => [m.id, m]))
    })
    // candidates: 2 × (1,000 × $1 + 500 × $2) / 1M = $0.004
    // synthesis reads 1,000 + its instructions and the report's + 1,000 candidate tokens, writes 500
    expect(estimate).toEqual({ usd: 0.004 + ((2_000 + SYNTHESIS_INSTRUCTION_TOKENS) * 1 + 500 * 2) / 1e6 })
    // Everything the synthesizer is sent besides the prompt and the answers, in the longer of the report's two forms.
    expect(SYNTHESIS_INSTRUCTION_TOKENS * 3).toBeGreaterThanOrEqual(
      SYNTHESIZER_INSTRUCTIONS.length + Math.max(REPORT_INSTRUCTIONS.structured.length, REPORT_INSTRUCTIONS.text.length)
    )
  })

  it("counts each call of a strategy that reads the answers (a judge, a refinement) like a synthesis", () => {
    const input = {
      promptChars: 3_000,
      models: ["test/alpha", "test/beta"],
      synthesizer: "test/synth",
      maxTokens: 500,
      synthesisMaxChars: 400_000,
      catalogue: new Map(catalogue.map((m) => [m.id, m]))
    }
    const alone = worstCaseCost(input)
    const ranked = worstCaseCost({ ...input, readers: ["test/alpha", "test/beta"] })
    if (!("usd" in alone) || !("usd" in ranked)) throw new Error("every price is known")
    // Each judge reads the prompt, its own instructions and the answers, and writes 500 tokens.
    expect(ranked.usd - alone.usd).toBeCloseTo(2 * ((2_000 + STEP_INSTRUCTION_TOKENS) * 1 + 500 * 2) / 1e6, 10)
    expect(STEP_INSTRUCTION_TOKENS * 3).toBeGreaterThanOrEqual(Math.max(JUDGE_INSTRUCTIONS.length, REFINE_INSTRUCTIONS.length))
  })

  it("names the models whose price is unknown", () => {
    const estimate = worstCaseCost({
      promptChars: 10,
      models: ["test/alpha", "nope/x"],
      synthesizer: "nope/y",
      maxTokens: 10,
      synthesisMaxChars: 1000,
      catalogue: new Map(catalogue.map((m) => [m.id, m]))
    })
    expect(estimate).toEqual({ unknownPrices: ["nope/x", "nope/y"] })
  })

  itLive.effect("refuses before any call a run over the budget, and says by how much", () =>
    Effect.gen(function*() {
      const { exit, requests, store } = yield* run({ maxCost: Option.some(0.001), maxTokens: Option.some(500) })
      expect(exit._tag).toBe("Left")
      const message = exit._tag === "Left" ? exit.left.message : ""
      expect(message).toMatch(/^the worst-case cost is \$0\.\d{2,4}, over the --max-cost budget of \$0\.0010 by \$0\.\d{2,4}$/)
      expect(requests).toEqual([])
      expect(store.manifests).toEqual([])
    }))

  itLive.effect("without --max-tokens the worst case fills each context, and the message says so", () =>
    Effect.gen(function*() {
      const { exit } = yield* run({ maxCost: Option.some(0.05) })
      expect(exit._tag === "Left" && exit.left.message).toMatch(/set it to bound the cost/)
    }))

  itLive.effect("lets a run within the budget go ahead", () =>
    Effect.gen(function*() {
      const { exit, requests } = yield* run({ maxCost: Option.some(1), maxTokens: Option.some(500) })
      expect(exit._tag).toBe("Right")
      expect(requests.length).toBe(4)
    }))
})

describe("the checks before a run (--max-cost, --check-models) over the real client", () => {
  const spec = (id: string) => ({ id, context_length: 10_000, pricing: { prompt: "0.000001", completion: "0.000002" } })
  const models = ["test/alpha", "test/beta", "test/gamma", "test/synth"]

  itClock.effect(
    "ask the provider for its model list once for many runs, and again before a refusal when it is over a minute old",
    () =>
      Effect.gen(function*() {
        const fake = yield* Effect.acquireRelease(
          Effect.promise(() => startFakeOpenRouter({ default: { kind: "ok", content: "fine" }, models: models.map(spec) })),
          (f) => Effect.promise(() => f.close())
        )
        const settings = makeTestSettings({
          baseUrl: fake.url,
          outputDir: tempDir(),
          maxCost: Option.some(1),
          maxTokens: Option.some(100),
          checkModels: true
        })
        const layer = providerLayer(settings)
        const listings = () => fake.requests.filter((r) => r.path.endsWith("/models")).length
        yield* Effect.gen(function*() {
          for (let i = 0; i < 3; i++) expect((yield* runToEnd(runPipeline({ prompt: `run ${i}` }))).manifest.status).toBe("ok")
          expect(listings()).toBe(1)
          // A model the provider lists since: the kept list is less than a minute old, so it decides.
          fake.setModels([...models, "test/new"].map(spec))
          // Either, not flip: an unexpected success must fail as an assertion, not as an effect failing with a run.
          const early = yield* Effect.either(runToEnd(runPipeline({ prompt: "new" }).pipe(withCallSettings({ models: ["test/new"] }))))
          expect(Either.isLeft(early) && early.left.message).toMatch(/unknown model at .*: test\/new/)
          expect(listings()).toBe(1)
          // Over a minute later the refusal is checked against a fresh list first, which is kept.
          yield* TestClock.adjust("2 minutes")
          expect((yield* runToEnd(runPipeline({ prompt: "new" }).pipe(withCallSettings({ models: ["test/new"] })))).manifest.status).toBe(
            "ok"
          )
          expect(listings()).toBe(2)
          const chats = fake.chatRequests().length
          const refused = yield* Effect.either(runToEnd(runPipeline({ prompt: "typo" }).pipe(withCallSettings({ models: ["test/alpah"] }))))
          expect(Either.isLeft(refused) && refused.left.message).toMatch(/unknown model at .*: test\/alpah/)
          expect(fake.chatRequests().length).toBe(chats)
          expect(listings()).toBe(2)
        }).pipe(Effect.provide(layer))
      }).pipe(Effect.scoped)
  )
})
