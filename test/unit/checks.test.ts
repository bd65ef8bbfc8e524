import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { RunRefused, SettingsError } from "../../src/domain/errors.js"
import type { ModelInfo } from "../../src/domain/modelCall.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { checkRunRequest } from "../../src/programs/checkRunRequest.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { isVariable, perMillion } from "../../src/services/providers/openaiCompatible/response.js"
import { Settings } from "../../src/services/settings.js"
import { loadSettings } from "../../src/settings/load.js"
import type { RawSettings, SettingsValue } from "../../src/settings/values.js"
import { failureOf } from "../support/failureOf.js"
import { startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { itClock } from "../support/itClock.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { runToEnd } from "../support/testClock.js"
import { makeTestSettings } from "../support/testSettings.js"
import { providerLayer } from "../support/withFakeProvider.js"

// Issue 22 item 4 and issue 23 findings 11, 13 and 14: values that could never work, or would pay for
// nothing, refused when the settings are read or before a run's first call, in one line that names them.

const KEY = "sk-or-v1-CHECKS-SECRET-0123456789abcdef"
const tempDir = makeTempDirs("parallel-llm-checks-")
const home = tempDir()
const hermetic = { XDG_CONFIG_HOME: home, APPDATA: home }

const load = (flags: RawSettings = {}, env: Record<string, string | undefined> = {}, configFlag?: string) =>
  loadSettings({ flags, configFlag, env: { ...hermetic, OPENROUTER_API_KEY: KEY, ...env } }).pipe(
    Effect.provide(NodeFileSystem.layer)
  )

/** The refusal a load must end in: a SettingsError, whose message is returned. */
const refusal = (flags: RawSettings = {}, env: Record<string, string | undefined> = {}, configFlag?: string) =>
  failureOf(load(flags, env, configFlag)).pipe(
    Effect.map((e) => {
      expect(e).toBeInstanceOf(SettingsError)
      expect(e.message).not.toContain("\n")
      return e.message
    })
  )

const configFile = (content: unknown): string => {
  const file = path.join(tempDir(), "config.json")
  fs.writeFileSync(file, JSON.stringify(content))
  return file
}

describe("the API key is checked when the settings are read (trimmed first)", () => {
  itLive.effect(
    "a character no HTTP header can carry is refused with its position and code point, never the key",
    () =>
      Effect.gen(function*() {
        const placeholder = yield* refusal({}, { OPENROUTER_API_KEY: "sk-or-v1-…" })
        expect(placeholder).toBe(
          "OPENROUTER_API_KEY has a character that cannot go in an HTTP header at position 10 (U+2026); it is not a key as " +
            "issued (`sk-or-v1-…` in examples is a placeholder): copy it again from https://openrouter.ai/keys"
        )
        const cases = [
          { key: `${KEY.slice(0, 12)}\u0007${KEY.slice(12)}`, where: "position 13 (U+0007)" },
          { key: `${KEY.slice(0, 5)}é${KEY.slice(5)}`, where: "position 6 (U+00E9)" },
          { key: `${KEY.slice(0, 20)} ${KEY.slice(20)}`, where: "position 21 (U+0020)" },
          { key: `${KEY}\r\nX-Injected: 1`, where: `position ${KEY.length + 1} (U+000D)` }
        ]
        for (const { key, where } of cases) {
          const message = yield* refusal({}, { OPENROUTER_API_KEY: key })
          expect(message).toContain(where)
          expect(message).not.toContain(KEY.slice(9, 20))
        }
        // Whitespace around the key (a trailing newline from a file or an env file) is trimmed, not refused.
        const { settings } = yield* load({}, { OPENROUTER_API_KEY: `  ${KEY}\n` })
        expect(Option.map(settings.apiKey, Redacted.value)).toEqual(Option.some(KEY))
      })
  )

  itLive.effect("the X-Title header's value (--app-title) is checked the same way", () =>
    Effect.gen(function*() {
      const message = yield* refusal({ appTitle: "Résumé bot" })
      expect(message).toBe("--app-title: has a character that cannot go in an HTTP header at position 2 (U+00E9)")
      const { settings } = yield* load({ appTitle: "My team's bot" })
      expect(settings.appTitle).toBe("My team's bot")
    }))
})

describe("a model id that is the API key is refused without printing it", () => {
  itLive.effect("as the synthesizer, a candidate, a judge, a fallback, a preset's model or a model object", () =>
    Effect.gen(function*() {
      const env = yield* refusal({}, { PARALLEL_LLM_SYNTHESIZER: KEY })
      expect(env).toBe(
        "PARALLEL_LLM_SYNTHESIZER: the model id is the API key (OPENROUTER_API_KEY), not a model id; it is not printed " +
          "or stored: name a model such as openai/gpt-5 instead"
      )
      const flags = yield* refusal({ models: `a/one,${KEY}` })
      expect(flags).toContain("--model: model 2 is the API key")
      expect(yield* refusal({ judge: `x/${KEY}` })).toContain("--judge: the model id is the API key")
      expect(yield* refusal({ fallbackSynthesizers: KEY })).toContain("--fallback-synthesizer: the model id is the API key")
      const file = configFile({ presets: { team: { models: ["a/one", KEY] } }, models: [{ id: "a/two", fallbacks: [KEY] }] })
      const preset = yield* refusal({}, {}, file)
      expect(preset).toContain(`presets.team.models (in ${file}): model 2 is the API key`)
      for (const message of [env, flags, preset]) expect(message).not.toContain(KEY)
      const object = yield* refusal({}, {}, configFile({ synthesizer: { id: KEY, temperature: 0.1 } }))
      expect(object).toContain("the model id is the API key")
      expect(object).not.toContain(KEY)
      // A short key (a local server's) is refused only as a whole id, not inside an ordinary one.
      const short = yield* load({ baseUrl: "http://127.0.0.1:9/v1", models: "llama3.1:8b,qwen:7b" }, { OPENROUTER_API_KEY: "qwen" })
      expect(short.settings.models).toEqual(["llama3.1:8b", "qwen:7b"])
    }))
})

describe("every list of models: no model named twice, judges and fallbacks within --max-models", () => {
  itLive.effect("a model named twice is refused, naming where", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ models: "a/one,b/two,a/one" })).toBe(
        "--model: a/one is named twice; name each model once (every mention would be asked, and paid for)"
      )
      expect(yield* refusal({}, { PARALLEL_LLM_JUDGE: "j/one,j/one" })).toContain("PARALLEL_LLM_JUDGE: j/one is named twice")
      expect(yield* refusal({ fallbackSynthesizers: "f/one,f/one" })).toContain("--fallback-synthesizer: f/one is named twice")
      const file = configFile({ presets: { team: { judge: ["j/a", "j/a"] } } })
      expect(yield* refusal({}, {}, file)).toContain(`presets.team.judge (in ${file}): j/a is named twice`)
    }))

  itLive.effect("judges and fallbacks beyond --max-models are refused, as candidates are", () =>
    Effect.gen(function*() {
      const judges = Array.from({ length: 17 }, (_, i) => `j/m${i}`).join(",")
      expect(yield* refusal({ judge: judges })).toBe("--judge: 17 judges, more than the 16 allowed in one run (--max-models)")
      expect(yield* refusal({ fallbackSynthesizers: "f/a,f/b,f/c", maxModels: "2" })).toBe(
        "--fallback-synthesizer: 3 fallback synthesizers, more than the 2 allowed in one run (--max-models)"
      )
      const file = configFile({ models: [{ id: "a/one", fallbacks: ["f/a", "f/b", "f/c"] }], maxModels: 2 })
      expect(yield* refusal({}, {}, file)).toBe(
        `the fallbacks of a/one (in ${file}): 3 fallbacks, more than the 2 allowed in one run (--max-models)`
      )
      const { settings } = yield* load({ judge: "j/a,j/b", maxModels: "2" })
      expect(settings.judges).toEqual(Option.some(["j/a", "j/b"]))
    }))
})

/** What `checkRunRequest` answers for a request under settings, with a catalogue of priced models. */
const check = (
  request: Parameters<typeof checkRunRequest>[0],
  overrides: Partial<SettingsValue> = {},
  catalogue: ReadonlyArray<ModelInfo> = []
) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({}, { answer: "fine" }, catalogue)
    const layer = Layer.mergeAll(client.layer, Settings.Test(makeTestSettings(overrides)))
    const result = yield* checkRunRequest(request).pipe(Effect.provide(layer), Effect.either)
    return Either.getLeft(result)
  })

const request = { prompt: "hello", models: ["test/alpha", "test/beta"], synthesizers: ["test/synth"] }

describe("checkRunRequest: what a run's own values contradict", () => {
  itLive.effect("a quorum above the number of models, naming both", () =>
    Effect.gen(function*() {
      const refused = yield* check({ ...request, quorum: 99 })
      expect(Option.map(refused, (e) => e.message)).toEqual(Option.some(
        "quorum 99 is more than the 2 candidate models of this run: it could never be met (lower --quorum, or name more models)"
      ))
      expect(yield* check({ ...request, quorum: 2 })).toEqual(Option.none())
    }))

  itLive.effect("a synthesis reserve not shorter than the deadline, naming both", () =>
    Effect.gen(function*() {
      const refused = yield* check({ ...request, deadlineMs: 30_000 }, { synthesisReserveMs: Option.some(30_000) })
      expect(Option.map(refused, (e) => e.message)).toEqual(Option.some(
        "--synthesis-reserve 30 s is not shorter than the deadline of 30 s: no time would be left for the candidates"
      ))
      expect(yield* check({ ...request, deadlineMs: 30_001 }, { synthesisReserveMs: Option.some(30_000) })).toEqual(Option.none())
    }))

  itLive.effect(
    "a call's own list: a model named twice, or the key, is refused; `self` samples one model on purpose",
    () =>
      Effect.gen(function*() {
        const twice = yield* check({ ...request, models: ["test/alpha", "test/alpha"] })
        expect(Option.map(twice, (e) => e.message)).toEqual(Option.some(
          "models: test/alpha is named twice; name each model once (every mention would be asked, and paid for)"
        ))
        expect(yield* check({ ...request, models: ["test/alpha", "test/alpha"], sampled: true })).toEqual(Option.none())
        const key = "sk-or-v1-a-key-of-more-than-sixteen-characters"
        const inModels = yield* check({ ...request, models: ["test/alpha", key] }, { apiKey: Option.some(Redacted.make(key)) })
        expect(Option.map(inModels, (e) => e.message)).toEqual(Option.some(
          "models: model 2 is the API key (OPENROUTER_API_KEY), not a model id; it is not printed or stored: name a model such as openai/gpt-5 instead"
        ))
        const asSynth = yield* check({ ...request, synthesizers: [key] }, { apiKey: Option.some(Redacted.make(key)) })
        expect(Option.map(asSynth, (e) => e.message.startsWith("synthesizer: the model id is the API key"))).toEqual(Option.some(true))
      })
  )
})

describe("withCallSettings: a call's own values over the Settings in force", () => {
  itLive.effect(
    "a call with no value of its own runs on the Settings in force, not on a copy; one with a value on its own",
    () =>
      Effect.gen(function*() {
        const given = Settings.make(makeTestSettings({ models: ["test/alpha", "test/beta"] }))
        const same = yield* Settings.pipe(
          withCallSettings({ models: undefined, synthesizer: undefined }),
          Effect.provideService(Settings, given)
        )
        expect(same).toBe(given)
        const own = yield* Settings.pipe(withCallSettings({ models: ["test/gamma"] }), Effect.provideService(Settings, given))
        expect(own.models).toEqual(["test/gamma"])
        expect(own.synthesizer).toBe(given.synthesizer)
      })
  )
})

describe("prices: negative or not a number counts as unpriced", () => {
  it("perMillion and isVariable", () => {
    expect(perMillion("0.000001")).toBeCloseTo(1, 10)
    expect(perMillion(0.000002)).toBeCloseTo(2, 10)
    expect(perMillion("0")).toBe(0)
    for (const price of ["-1", -1, "abc", "", null, undefined, "Infinity"]) expect(perMillion(price), String(price)).toBeUndefined()
    expect(isVariable("-1")).toBe(true)
    expect(isVariable("0.000001")).toBe(false)
    expect(isVariable("abc")).toBe(false)
  })

  itClock.effect(
    "--max-cost with a variable-price model (/models lists \"-1\") refuses to bound the run; no call is made",
    () =>
      Effect.gen(function*() {
        const spec = (id: string, price: string) => ({ id, context_length: 10_000, pricing: { prompt: price, completion: price } })
        const fake = yield* Effect.acquireRelease(
          Effect.promise(() =>
            startFakeOpenRouter({
              default: { kind: "ok", content: "fine" },
              models: [
                spec("test/alpha", "0.000001"),
                spec("test/synth", "0.000001"),
                spec("openrouter/auto", "-1"),
                spec("test/odd", "n/a")
              ]
            })
          ),
          (f) => Effect.promise(() => f.close())
        )
        const settings = makeTestSettings({
          baseUrl: fake.url,
          outputDir: tempDir(),
          models: ["test/alpha", "openrouter/auto"],
          maxCost: Option.some(0.000001),
          maxTokens: Option.some(100)
        })
        const layer = providerLayer(settings)
        const variable = yield* failureOf(runToEnd(runPipeline({ prompt: "hello" })).pipe(Effect.provide(layer)))
        expect(variable).toBeInstanceOf(RunRefused)
        expect(variable.message).toBe("--max-cost: no price known for openrouter/auto, so the cost cannot be bounded")
        // A price that is not a number no longer makes the whole model list unreadable: that model is unpriced.
        const odd = yield* failureOf(
          runToEnd(runPipeline({ prompt: "hello" }).pipe(withCallSettings({ models: ["test/odd"] }))).pipe(Effect.provide(layer))
        )
        expect(odd.message).toBe("--max-cost: no price known for test/odd, so the cost cannot be bounded")
        expect(fake.chatRequests()).toHaveLength(0)
      }).pipe(Effect.scoped)
  )
})
