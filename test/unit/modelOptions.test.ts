import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Manifest } from "../../src/domain/manifest.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { worstCaseCost } from "../../src/programs/checkRunRequest.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { loadSettings } from "../../src/settings/load.js"
import type { SettingsValue } from "../../src/settings/values.js"
import type { RecordedRequest } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { itLive } from "../support/itLive.js"
import { serverEnv } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"
import { resetFakeBeforeEach } from "../support/useFakeOpenRouter.js"
import { appLayerOver, withFakeProvider } from "../support/withFakeProvider.js"

// Per-model options (model objects in the config file), the run's reasoning effort, and web search with
// the citations it brings back: what goes into each request body, and what the manifest keeps.

const provider = withFakeProvider()
const { root: tmp, freshDir } = tempRoot("pllm-modelopts-")

resetFakeBeforeEach(provider)

const bodyFor = (model: string): Record<string, unknown> => {
  const request = provider.log().find((r: RecordedRequest) => r.model === model)
  if (request === undefined) throw new Error(`no request for ${model}`)
  return request.body as Record<string, unknown>
}

/** A run in this process, over real HTTP to the fake, its files in a fresh directory. */
const run = (overrides: Partial<SettingsValue>, web?: boolean) =>
  runPipeline({ prompt: "What is new?" }).pipe(
    withCallSettings({ web }),
    Effect.provide(appLayerOver(provider.settings({
      outputDir: freshDir("runs"),
      models: ["test/alpha", "test/beta"],
      retries: 0,
      logLevel: "error",
      ...overrides
    }))),
    Effect.map((result) => ({
      ...result,
      manifest: Schema.decodeUnknownSync(Manifest)(JSON.parse(fs.readFileSync(path.join(result.runDir, "run.json"), "utf8")))
    }))
  )

const citation = (url: string, title: string) => ({
  type: "url_citation",
  url_citation: { url, title, content: "page text", start_index: 0, end_index: 10 }
})

describe("per-model options in the request body", () => {
  it.live("each model gets its own temperature, max tokens, reasoning, provider routing and fallback list", () =>
    Effect.gen(function*() {
      // The primary fails with a 503: OpenRouter (here the fake) serves the first fallback instead.
      provider.fake.setScript({ "test/alpha": { kind: "status", status: 503 } })
      const { manifest } = yield* run({
        modelOptions: {
          "test/alpha": {
            temperature: 0.1,
            maxTokens: 300,
            reasoning: { effort: "high" },
            provider: { sort: "price", order: ["prov-a", "prov-b"], allowFallbacks: false },
            fallbacks: ["test/alpha-backup"]
          },
          "test/synth": { temperature: 0, maxTokens: 2000 }
        }
      })
      const alpha = bodyFor("test/alpha")
      expect(alpha).toMatchObject({
        temperature: 0.1,
        max_tokens: 300,
        reasoning: { effort: "high" },
        provider: { sort: "price", order: ["prov-a", "prov-b"], allow_fallbacks: false },
        models: ["test/alpha", "test/alpha-backup"]
      })
      expect(alpha).not.toHaveProperty("tools")
      const beta = bodyFor("test/beta")
      expect(beta.temperature).toBe(0.7)
      for (const absent of ["max_tokens", "reasoning", "provider", "models", "tools"]) expect(beta).not.toHaveProperty(absent)
      expect(bodyFor("test/synth")).toMatchObject({ temperature: 0, max_tokens: 2000 })

      expect(manifest.status).toBe("ok")
      const [a, b] = manifest.candidates
      expect(a).toMatchObject({ model: "test/alpha", servedBy: "test/alpha-backup", status: "ok" })
      expect(a!.options).toEqual({
        temperature: 0.1,
        maxTokens: 300,
        reasoning: { effort: "high" },
        provider: { sort: "price", order: ["prov-a", "prov-b"], allowFallbacks: false },
        fallbacks: ["test/alpha-backup"]
      })
      expect(b!.options).toEqual({ temperature: 0.7 })
      expect(manifest.synthesis?.options).toEqual({ temperature: 0, maxTokens: 2000 })
      expect(manifest.settings).not.toHaveProperty("reasoning")
      expect(manifest.settings).not.toHaveProperty("web")
    }))

  it.live("the run's reasoning wins over a model's own; web search goes to every candidate, not to the synthesizer", () =>
    Effect.gen(function*() {
      const { manifest } = yield* run({
        reasoning: Option.some("low"),
        web: true,
        modelOptions: { "test/alpha": { reasoning: { effort: "high" } } }
      })
      for (const model of ["test/alpha", "test/beta"]) {
        expect(bodyFor(model)).toMatchObject({ reasoning: { effort: "low" }, tools: [{ type: "openrouter:web_search" }] })
      }
      expect(bodyFor("test/synth")).toMatchObject({ reasoning: { effort: "low" } })
      expect(bodyFor("test/synth")).not.toHaveProperty("tools")
      expect(manifest.settings).toMatchObject({ reasoning: "low", web: true })
      expect(manifest.candidates[0]!.options).toMatchObject({ reasoning: { effort: "low" }, web: true })
    }))

  it.live("web: false for one call wins over the setting", () =>
    Effect.gen(function*() {
      const { manifest } = yield* run({ web: true }, false)
      expect(bodyFor("test/alpha")).not.toHaveProperty("tools")
      expect(manifest.settings).not.toHaveProperty("web")
    }))
})

describe("citations, reasoning and cached tokens", () => {
  for (const stream of [false, true]) {
    it.live(`${stream ? "streamed" : "whole"} answers: kept in the manifest, cleaned, and shown to the synthesizer`, () =>
      Effect.gen(function*() {
        provider.fake.setScript({
          "test/alpha": {
            kind: "ok",
            content: "It changed [example](https://example.com/news).",
            annotations: [
              citation("https://example.com/news", "News\u001b[31m of the day"),
              citation("https://example.com/news", "News\u001b[31m of the day"),
              { type: "file_citation", file_citation: { file_id: "f1" } },
              citation("https://example.org/other", "Other page")
            ],
            usage: { prompt_tokens: 100, completion_tokens: 50, reasoning_tokens: 30, cached_tokens: 80 }
          },
          // Annotations that are not a list are passed over: the answer stands.
          "test/beta": { kind: "ok", annotations: "bogus", usage: { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 2 } }
        })
        const { manifest } = yield* run({ stream }, true)
        const alpha = manifest.candidates[0]!
        expect(alpha.citations).toEqual([
          { url: "https://example.com/news", title: "News[31m of the day", content: "page text", startIndex: 0, endIndex: 10 },
          { url: "https://example.org/other", title: "Other page", content: "page text", startIndex: 0, endIndex: 10 }
        ])
        expect(manifest.candidates[1]).toMatchObject({ status: "ok" })
        expect(manifest.candidates[1]).not.toHaveProperty("citations")
        expect(alpha.usage).toMatchObject({ reasoningTokens: 30, cachedTokens: 80 })
        expect(manifest.candidates[1]!.usage).toMatchObject({ reasoningTokens: 2 })
        expect(manifest.candidates[1]!.usage).not.toHaveProperty("cachedTokens")
        expect(manifest.usage).toMatchObject({ reasoningTokens: 32, cachedTokens: 80 })

        const messages = bodyFor("test/synth").messages as ReadonlyArray<{ content: string }>
        const user = messages[1]!.content
        expect(user).toContain("Web pages this candidate cited:\n<sources>\n- News[31m of the day: https://example.com/news\n")
        expect(user).toContain("- Other page: https://example.org/other\n</sources>")
        // Right after the citing candidate's answer, not the other one's.
        expect(user).toMatch(/It changed \[example\]\(https:\/\/example\.com\/news\)\.\n<\/candidate>\n\nWeb pages this candidate cited:/)
        expect(user.match(/<sources>/g)).toHaveLength(1)
      }))
  }
})

describe("model objects in the config file", () => {
  const configFile = (content: unknown): string => {
    const file = path.join(freshDir("config"), "config.json")
    fs.writeFileSync(file, JSON.stringify(content))
    return file
  }
  const load = (file: string) =>
    loadSettings({ flags: {}, configFlag: file, env: { XDG_CONFIG_HOME: tmp }, requireApiKey: false }).pipe(
      Effect.provide(NodeFileSystem.layer),
      Effect.either
    )
  const refusal = (models: unknown, extra: Record<string, unknown> = {}) =>
    load(configFile({ models, ...extra })).pipe(
      Effect.map(Either.match({ onLeft: (e) => e.message, onRight: () => "accepted" }))
    )

  itLive.effect("ids and objects mix; the objects' options are kept by id, also the synthesizer's", () =>
    Effect.gen(function*() {
      const loaded = yield* load(configFile({
        models: ["a/one", { id: "b/two", temperature: 0.2, fallbacks: ["b/three"], provider: { sort: "throughput" } }],
        synthesizer: { id: "s/synth", maxTokens: 4000, reasoning: { effort: "medium" } }
      }))
      expect(Either.isRight(loaded)).toBe(true)
      const { settings, sources } = Either.getOrThrow(loaded)
      expect(settings.models).toEqual(["a/one", "b/two"])
      expect(settings.synthesizer).toBe("s/synth")
      expect(sources.models).toBe("file")
      expect(settings.modelOptions).toEqual({
        "b/two": { temperature: 0.2, fallbacks: ["b/three"], provider: { sort: "throughput" } },
        "s/synth": { maxTokens: 4000, reasoning: { effort: "medium" } }
      })
    }))

  itLive.effect("a preset's model objects, reasoning and web work like the top level's", () =>
    Effect.gen(function*() {
      const file = configFile({
        models: ["a/one"],
        presets: { deep: { models: [{ id: "b/two", maxTokens: 900 }, "a/one"], reasoning: "high", web: true } }
      })
      const loaded = yield* loadSettings({
        flags: {},
        configFlag: file,
        env: { XDG_CONFIG_HOME: tmp, PARALLEL_LLM_PRESET: "deep" },
        requireApiKey: false
      }).pipe(
        Effect.provide(NodeFileSystem.layer)
      )
      expect(loaded.settings.models).toEqual(["b/two", "a/one"])
      expect(loaded.settings.modelOptions).toEqual({ "b/two": { maxTokens: 900 } })
      expect(loaded.settings.reasoning).toEqual(Option.some("high"))
      expect(loaded.settings.web).toBe(true)
      expect(loaded.sources.web).toBe("preset")
    }))

  itLive.effect("a bad model object is refused naming the model and the field", () =>
    Effect.gen(function*() {
      expect(yield* refusal([{ id: "b/two", temprature: 0.2 }])).toMatch(/models\.0: model "b\/two": temprature: unknown key$/)
      expect(yield* refusal(["a/one", { id: "b/two", temperature: 3 }])).toMatch(
        /model "b\/two": temperature: expected a number from 0 to 2/
      )
      expect(yield* refusal([{ id: "b/two", reasoning: { effort: "max" } }])).toMatch(
        /model "b\/two": reasoning\.effort: expected "low", "medium", "high"/
      )
      expect(yield* refusal([{ id: "b/two", provider: { sort: "cheapest" } }])).toMatch(
        /model "b\/two": provider\.sort: expected "price", "throughput", "latency"/
      )
      expect(yield* refusal([{ id: "b/two", fallbacks: ["not an id"] }])).toMatch(/model "b\/two": fallbacks\.0: .*is not a model id/)
      expect(yield* refusal([{ temperature: 1 }])).toMatch(/a model object: id: missing/)
      expect(yield* refusal([42])).toMatch(/expected a model id or an object with an "id"/)
      expect(yield* refusal([{ id: "b/two", temperature: 0.1 }], { synthesizer: { id: "b/two", temperature: 0.9 } })).toMatch(
        /model "b\/two" is configured twice with different options/
      )
    }))
})

describe("the cost budget with per-model options", () => {
  // $1 in, $2 out per million tokens; the fallback costs ten times more.
  const info = (id: string, scale = 1) => [id, { id, contextLength: 10_000, promptPrice: scale, completionPrice: 2 * scale }] as const
  const estimate = (modelOptions: SettingsValue["modelOptions"]) =>
    worstCaseCost({
      promptChars: 3_000, // 1,000 tokens at most
      models: ["m/a"],
      synthesizer: "m/s",
      maxTokens: 500,
      synthesisMaxChars: 1_000,
      catalogue: new Map([info("m/a"), info("m/s"), info("m/pricey", 10)]),
      modelOptions
    })

  it("a model's own maxTokens, and the costliest of its fallbacks, bound the worst case", () => {
    const base = estimate({})
    const ownTokens = estimate({ "m/a": { maxTokens: 1_500 } })
    const fallback = estimate({ "m/a": { fallbacks: ["m/pricey"] } })
    if (!("usd" in base && "usd" in ownTokens && "usd" in fallback)) throw new Error("prices unknown")
    // 1,000 more output tokens at $2 per million.
    expect(ownTokens.usd - base.usd).toBeCloseTo(0.002, 6)
    // The fallback's call: 1,000 × $10 + 500 × $20 per million, instead of 1,000 × $1 + 500 × $2.
    expect(fallback.usd - base.usd).toBeCloseTo(0.02 - 0.002, 6)
    expect(estimate({ "m/a": { fallbacks: ["m/unknown"] } })).toEqual({ unknownPrices: ["m/unknown"] })
  })
})

describe("over the built CLI and MCP", () => {
  const env = (out: string, extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH,
    HOME: tmp,
    XDG_CONFIG_HOME: tmp,
    OPENROUTER_BASE_URL: provider.url,
    PARALLEL_LLM_OUTPUT_DIR: out,
    PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
    ...extra
  })

  it("ask --reasoning sets the effort of every model; a bad effort is refused naming the flag", async () => {
    const config = path.join(freshDir("cli"), "config.json")
    fs.writeFileSync(config, JSON.stringify({ models: [{ id: "local/a", reasoning: { effort: "high" }, temperature: 0.3 }, "local/b"] }))
    const out = freshDir("ask")
    const r = await runCliInProcess(["ask", "hello", "--config", config, "--reasoning", "medium", "-s", "local/synth"], { env: env(out) })
    expect(r.code, r.stderr).toBe(0)
    expect(bodyFor("local/a")).toMatchObject({ reasoning: { effort: "medium" }, temperature: 0.3 })
    expect(bodyFor("local/b")).toMatchObject({ reasoning: { effort: "medium" }, temperature: 0.7 })
    expect(bodyFor("local/synth")).toMatchObject({ reasoning: { effort: "medium" } })

    const bad = await runCliInProcess(["ask", "hello", "--reasoning", "max"], { env: env(freshDir("bad")) })
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toMatch(/--reasoning: .*"low".*"medium".*"high"/)
  })

  it("process_prompt web: true sends the web search tool; get_config shows the model objects' options", async () => {
    const config = path.join(freshDir("mcp-config"), "config.json")
    fs.writeFileSync(config, JSON.stringify({ synthesizer: { id: "local/s", temperature: 0.1 } }))
    const mcp = await connectMcpInProcess(serverEnv({
      baseUrl: provider.url,
      outputDir: freshDir("mcp"),
      apiKey: "",
      models: ["local/m"],
      synthesizer: "local/s",
      extra: { PARALLEL_LLM_CONFIG: config }
    }))
    try {
      await mcp.client.listTools()
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "hello", web: true } })
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      expect(bodyFor("local/m")).toMatchObject({ tools: [{ type: "openrouter:web_search", parameters: {} }] })
      expect(bodyFor("local/s")).toMatchObject({ temperature: 0.1 })
      expect(bodyFor("local/s")).not.toHaveProperty("tools")
      // Not OpenRouter: the run says the server may ignore the tool.
      expect(mcp.stderr()).toMatch(/web search: .* is not OpenRouter/)
      const shown = await mcp.client.callTool({ name: "get_config", arguments: {} })
      expect(shown.structuredContent).toMatchObject({ web: false, reasoning: null, modelOptions: { "local/s": { temperature: 0.1 } } })
    } finally {
      await mcp.close()
    }
  })
})
