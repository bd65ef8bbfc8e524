import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { withBareValues } from "../../src/cli/settingsOptions.js"
import { Manifest } from "../../src/domain/manifest.js"
import { ModelId, responseFileName } from "../../src/domain/model.js"
import type { ModelRequest } from "../../src/domain/modelCall.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { checkRunRequest } from "../../src/programs/checkRunRequest.js"
import { lastServedBy } from "../../src/programs/lastServedBy.js"
import { listConfiguredModels } from "../../src/programs/listConfiguredModels.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { chatBody, providerRequests } from "../../src/services/providers/openaiCompatible/request.js"
import { Settings } from "../../src/services/settings.js"
import { DEFAULT_FALLBACK_SYNTHESIZERS, DEFAULT_MODELS, DEFAULT_SYNTHESIZER } from "../../src/settings/table/models.js"
import type { SettingsValue } from "../../src/settings/values.js"
import type { Behavior, RecordedRequest } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"
import { resetFakeBeforeEach } from "../support/useFakeOpenRouter.js"
import { appLayerOver, withFakeProvider } from "../support/withFakeProvider.js"

// What OpenRouter's newer API asks of a call (issue 27): web search as a server tool, the response cache,
// usage without asking, cost details, `~…-latest` slugs. Against the loopback fake, in this process.

const { root: tmp, freshDir } = tempRoot("pllm-openrouter-")
const provider = withFakeProvider()
resetFakeBeforeEach(provider)

const requestsFor = (model: string): ReadonlyArray<RecordedRequest> => provider.fake.chatRequests().filter((r) => r.model === model)
const bodyFor = (model: string): Record<string, unknown> => {
  const request = requestsFor(model)[0]
  if (request === undefined) throw new Error(`no request for ${model}`)
  return request.body as Record<string, unknown>
}

/** A run in this process, over real HTTP to the fake, its manifest read back. */
const run = (overrides: Partial<SettingsValue>, web?: boolean) =>
  runPipeline({ prompt: "What is new?" }).pipe(
    withCallSettings({ web }),
    Effect.provide(appLayerOver(makeTestSettings({
      baseUrl: provider.fake.url,
      outputDir: freshDir("runs"),
      models: ["test/alpha", "test/beta"],
      retries: 0,
      logLevel: "error",
      ...overrides
    }))),
    Effect.map((result) => Schema.decodeUnknownSync(Manifest)(JSON.parse(fs.readFileSync(path.join(result.runDir, "run.json"), "utf8"))))
  )

const webLimits: Partial<SettingsValue> = {
  webEngine: Option.some("exa"),
  webMaxResults: Option.some(3),
  webMaxUses: Option.some(2),
  webDomains: Option.some(["arxiv.org", "example.com/docs"])
}

describe("web search: OpenRouter's server tool", () => {
  it.live("--web sends the openrouter:web_search tool with the limits set, to the candidates only", () =>
    Effect.gen(function*() {
      const manifest = yield* run(webLimits, true)
      for (const model of ["test/alpha", "test/beta"]) {
        const body = bodyFor(model)
        expect(body.tools).toEqual([{
          type: "openrouter:web_search",
          parameters: { engine: "exa", max_results: 3, max_uses: 2, allowed_domains: ["arxiv.org", "example.com/docs"] }
        }])
        expect(body).not.toHaveProperty("plugins")
      }
      expect(bodyFor("test/synth")).not.toHaveProperty("tools")
      expect(manifest.candidates[0]!.options).toMatchObject({
        web: true,
        webSearch: { engine: "exa", maxResults: 3, maxUses: 2, allowedDomains: ["arxiv.org", "example.com/docs"] }
      })
    }))

  it.live("unset limits are not sent: the provider's defaults apply", () =>
    Effect.gen(function*() {
      yield* run({}, true)
      expect(bodyFor("test/alpha").tools).toEqual([{ type: "openrouter:web_search", parameters: {} }])
    }))

  it.live("a server other than OpenRouter that refuses the tool with a 400 naming it is asked once more with the plugin", () =>
    Effect.gen(function*() {
      const refusal: Behavior = {
        kind: "status",
        status: 400,
        body: { error: { code: 400, message: "tools.0.type: expected 'function'" } }
      }
      provider.fake.setScript({ "test/alpha": [refusal, { kind: "ok" }], "test/beta": { kind: "status", status: 400 } })
      const manifest = yield* run(webLimits, true)
      const [first, second] = requestsFor("test/alpha")
      expect(first!.body).toHaveProperty("tools")
      expect(second!.body).not.toHaveProperty("tools")
      expect((second!.body as Record<string, unknown>).plugins).toEqual([{ id: "web", engine: "exa", max_results: 3 }])
      expect(manifest.candidates[0]).toMatchObject({ status: "ok", attempts: 1 })
      // A 400 about something else is the call's failure, not asked again.
      expect(requestsFor("test/beta")).toHaveLength(1)
      expect(manifest.candidates[1]).toMatchObject({ status: "error", error: { httpStatus: 400 } })
    }))

  it("web search's domain lists: one or the other, refused together naming both", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: tmp, XDG_CONFIG_HOME: tmp, OPENROUTER_BASE_URL: provider.fake.url }
    const both = await runCliInProcess(["config", "--web-domain", "a.org", "--web-exclude-domain", "b.org"], { env })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--web-exclude-domain: not with --web-domain")
    const bad = await runCliInProcess(["config"], { env: { ...env, PARALLEL_LLM_WEB_DOMAINS: "a.org, not a domain" } })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("PARALLEL_LLM_WEB_DOMAINS")
  })
})

describe("the response cache (--cache)", () => {
  for (const stream of [false, true]) {
    it.live(`${stream ? "streamed" : "whole"}: sends the header and TTL, records hit (free, with its age) and miss; off by default`, () =>
      Effect.gen(function*() {
        const usage = { prompt_tokens: 100, completion_tokens: 40, cost: 0.25 }
        provider.fake.setScript({
          "test/alpha": {
            kind: "ok",
            usage,
            headers: { "X-OpenRouter-Cache-Status": "HIT", "X-OpenRouter-Cache-Age": "42", "X-OpenRouter-Cache-TTL": "600" }
          },
          "test/beta": { kind: "ok", usage, headers: { "X-OpenRouter-Cache-Status": "MISS" } }
        })
        const manifest = yield* run({ cacheTtl: 600, stream })
        for (const request of provider.fake.chatRequests()) {
          expect(request.headers["x-openrouter-cache"]).toBe("true")
          expect(request.headers["x-openrouter-cache-ttl"]).toBe("600")
        }
        const [alpha, beta] = manifest.candidates
        expect(alpha).toMatchObject({ cache: "hit", cacheAgeSeconds: 42 })
        expect(alpha!.usage).toEqual({ promptTokens: 100, completionTokens: 40, cost: 0 })
        expect(beta).toMatchObject({ cache: "miss", usage: { cost: 0.25 } })
        expect(beta).not.toHaveProperty("cacheAgeSeconds")
        expect(manifest.synthesis).not.toHaveProperty("cache")

        // Off (the default): no header, and no cache field whatever the server says.
        provider.fake.reset()
        const off = yield* run({ stream })
        expect(provider.fake.chatRequests()[0]!.headers).not.toHaveProperty("x-openrouter-cache")
        expect(off.candidates[0]).not.toHaveProperty("cache")
      }))
  }

  it.live("with it on, the same answers make the same synthesis request (their order is drawn from them), so a rerun can hit", () =>
    Effect.gen(function*() {
      const models = ["test/a1", "test/a2", "test/a3", "test/a4", "test/a5"]
      const synthBody = () => JSON.stringify(provider.fake.chatRequests().find((r) => r.model === "test/synth")?.body)
      yield* run({ cacheTtl: 300, models })
      const first = synthBody()
      provider.fake.reset()
      yield* run({ cacheTtl: 300, models })
      // One chance in 120 that five answers shuffled at random come out in the same order.
      expect(synthBody()).toBe(first)
    }))

  it("--cache alone stands for 300 seconds; a whole number after it is its TTL; a prompt after it stays the prompt", () => {
    expect(withBareValues(["ask", "--cache", "a prompt"])).toEqual(["ask", "--cache=300", "a prompt"])
    expect(withBareValues(["eval", "f.jsonl", "--cache"])).toEqual(["eval", "f.jsonl", "--cache=300"])
    expect(withBareValues(["ask", "--cache", "600", "hi"])).toEqual(["ask", "--cache", "600", "hi"])
    expect(withBareValues(["ask", "--", "--cache"])).toEqual(["ask", "--", "--cache"])
  })

  it("the CLI reads --cache, --cache TTL and PARALLEL_LLM_CACHE", async () => {
    const env = { PATH: process.env.PATH ?? "", HOME: tmp, XDG_CONFIG_HOME: tmp, OPENROUTER_BASE_URL: provider.fake.url }
    const cacheOf = async (args: ReadonlyArray<string>, extra: Record<string, string> = {}) => {
      const result = await runCliInProcess(["config", "--json", ...args], { env: { ...env, ...extra } })
      expect(result.stderr).toBe("")
      return (JSON.parse(result.stdout) as ReadonlyArray<{ setting: string; value: unknown }>).find((r) => r.setting === "cacheTtl")?.value
    }
    expect(await cacheOf([])).toBe(0)
    expect(await cacheOf(["--cache"])).toBe(300)
    expect(await cacheOf(["--cache", "900"])).toBe(900)
    expect(await cacheOf([], { PARALLEL_LLM_CACHE: "60" })).toBe(60)
    const refused = await runCliInProcess(["config", "--cache", "90000"], { env })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("--cache")
  })
})

describe("request bodies", () => {
  const settings = { apiKey: Option.some(Redacted.make("k")), appUrl: "https://x.test", appTitle: "t", cacheTtl: 0 }
  const bodyOf = (baseUrl: string, request: ModelRequest, stream: boolean): Record<string, unknown> => {
    const body = providerRequests({ ...settings, baseUrl }).chat(request, stream).body
    if (body._tag !== "Uint8Array") throw new Error("expected a JSON body")
    return JSON.parse(new TextDecoder().decode(body.body)) as Record<string, unknown>
  }
  const ask: ModelRequest = { model: "a/one", messages: [{ role: "user", content: "hi" }] }

  it("stream_options.include_usage goes to other servers, not to OpenRouter (which always sends usage)", () => {
    expect(bodyOf("http://127.0.0.1:8080/v1", ask, true)).toMatchObject({ stream_options: { include_usage: true } })
    expect(bodyOf("http://127.0.0.1:8080/v1", ask, false)).not.toHaveProperty("stream_options")
    const openRouter = bodyOf("https://openrouter.ai/api/v1", ask, true)
    expect(openRouter).not.toHaveProperty("stream_options")
    expect(openRouter).not.toHaveProperty("usage")
  })

  it("the same call serializes to the same bytes, however its objects were built (the cache's key)", () => {
    const one: ModelRequest = {
      model: "a/one",
      messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }],
      temperature: 0.2,
      provider: { sort: "price", order: ["p1"], allowFallbacks: false },
      web: { engine: "exa", maxResults: 3, allowedDomains: ["a.org"] },
      reasoning: { effort: "low" }
    }
    const other = {
      reasoning: { effort: "low" },
      web: { allowedDomains: ["a.org"], maxResults: 3, engine: "exa" },
      provider: { allowFallbacks: false, order: ["p1"], sort: "price" },
      temperature: 0.2,
      messages: [{ content: "be brief", role: "system" }, { content: "hi", role: "user" }],
      model: "a/one"
    } as const satisfies ModelRequest
    const options = { stream: true, openRouter: true, webForm: "tool" } as const
    expect(JSON.stringify(chatBody(other, options))).toBe(JSON.stringify(chatBody(one, options)))
  })
})

describe("usage details", () => {
  for (const stream of [false, true]) {
    it.live(`${stream ? "streamed" : "whole"}: cost_details, cached and reasoning tokens go to the call record`, () =>
      Effect.gen(function*() {
        provider.fake.setScript({
          "test/alpha": {
            kind: "ok",
            usage: {
              prompt_tokens: 200,
              completion_tokens: 60,
              cost: 0.5,
              reasoning_tokens: 20,
              cached_tokens: 150,
              cost_details: {
                upstream_inference_cost: 0.45,
                upstream_inference_prompt_cost: 0.3,
                upstream_inference_completions_cost: 0.15
              }
            }
          }
        })
        const manifest = yield* run({ stream })
        expect(manifest.candidates[0]!.usage).toEqual({
          promptTokens: 200,
          completionTokens: 60,
          cost: 0.5,
          reasoningTokens: 20,
          cachedTokens: 150,
          costDetails: { upstreamInferenceCost: 0.45, upstreamPromptCost: 0.3, upstreamCompletionCost: 0.15 }
        })
      }))
  }
})

describe("~vendor/family-latest slugs", () => {
  it("the default panel and synthesizers are OpenRouter's latest slugs (DeepSeek, without one, stays exact)", () => {
    expect(DEFAULT_MODELS.filter((m) => !m.startsWith("~"))).toEqual(["deepseek/deepseek-v4-pro"])
    expect(DEFAULT_SYNTHESIZER).toMatch(/^~[a-z-]+\/[a-z-]+-latest$/)
    for (const m of [...DEFAULT_MODELS, ...DEFAULT_FALLBACK_SYNTHESIZERS]) expect(Schema.decodeUnknownSync(ModelId)(m)).toBe(m)
    expect(DEFAULT_FALLBACK_SYNTHESIZERS.every((m) => m.startsWith("~"))).toBe(true)
    expect(responseFileName(0, "~anthropic/claude-opus-latest")).toBe("responses/01-anthropic-claude-opus-latest.md")
  })

  it("models shows what a slug resolves to when the list says", async () => {
    provider.fake.setModels([
      { id: "test/alpha-2" },
      { id: "~test/alpha-latest", alias_target: { slug: "test/alpha-2" } },
      { id: "test/synth" }
    ])
    const env = { PATH: process.env.PATH ?? "", HOME: tmp, XDG_CONFIG_HOME: tmp, OPENROUTER_BASE_URL: provider.fake.url }
    const args = ["models", "-m", "~test/alpha-latest", "-s", "test/synth", "--fallback-synthesizer", "none"]
    const result = await runCliInProcess(args, { env })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/~test\/alpha-latest +found → test\/alpha-2/)
    const json = await runCliInProcess([...args, "--json"], { env })
    const listed = JSON.parse(json.stdout) as { models: ReadonlyArray<Record<string, unknown>> }
    expect(listed.models[0]).toMatchObject({ id: "~test/alpha-latest", found: true, resolvesTo: "test/alpha-2" })
  })

  /** The models and the check against a catalogue that leaves `~test/alpha-latest` out, at `baseUrl`. */
  const checkedAt = (baseUrl: string) =>
    Effect.gen(function*() {
      const client = yield* makeScriptedClient({}, { answer: "fine" }, [{ id: "test/beta" }, { id: "test/synth" }])
      const settings = makeTestSettings({ baseUrl, models: ["~test/alpha-latest", "test/beta"], checkModels: true })
      const layer = Layer.mergeAll(client.layer, makeTestRunStore().layer, Settings.Test(settings))
      const listing = yield* listConfiguredModels().pipe(Effect.provide(layer))
      const checked = yield* checkRunRequest({ prompt: "hi", models: settings.models, synthesizers: ["test/synth"] }).pipe(
        Effect.provide(layer),
        Effect.either
      )
      return { alpha: listing.models[0], checked }
    })

  itLive.effect(
    "on OpenRouter a latest slug the list leaves out is resolved at the call: not unknown to models or --check-models",
    () =>
      Effect.gen(function*() {
        const { alpha, checked } = yield* checkedAt("https://openrouter.ai/api/v1")
        expect(alpha).toMatchObject({ id: "~test/alpha-latest", latest: true, found: undefined })
        expect(Either.isRight(checked)).toBe(true)
        // Another server has no such slugs: there it is unknown like any other id.
        const elsewhere = yield* checkedAt("http://127.0.0.1:9/v1")
        expect(elsewhere.alpha).toMatchObject({ found: false })
        expect(Either.isLeft(elsewhere.checked) && elsewhere.checked.left.message).toContain(
          "unknown model at http://127.0.0.1:9/v1: ~test/alpha-latest"
        )
      })
  )

  it.live("a run records the model that served a latest slug, which models then names", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "~test/alpha-latest": { kind: "ok", servedBy: "test/alpha-7" } })
      const outputDir = freshDir("served")
      const manifest = yield* run({ models: ["~test/alpha-latest", "test/beta"], outputDir })
      expect(manifest.candidates[0]).toMatchObject({ model: "~test/alpha-latest", servedBy: "test/alpha-7", status: "ok" })
      expect(manifest.candidates[0]!.file).toBe("responses/01-test-alpha-latest.md")
      const served = yield* lastServedBy(["~test/alpha-latest", "~test/other-latest"]).pipe(
        Effect.provide(appLayerOver(makeTestSettings({ outputDir })))
      )
      expect([...served.entries()]).toEqual([["~test/alpha-latest", { servedBy: "test/alpha-7", runId: expect.any(String) }]])
    }))
})
