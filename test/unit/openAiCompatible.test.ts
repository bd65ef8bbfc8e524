import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Layer, Option, Redacted, Stream, TestClock } from "effect"
import { globalValue } from "effect/GlobalValue"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { httpStatusOf, isTransient, type ProviderError } from "../../src/domain/errors.js"
import type { ModelRequest } from "../../src/domain/modelCall.js"
import { foldAnswer, type FoldHooks, streamedText, textSoFar } from "../../src/programs/answerFold.js"
import { callModel } from "../../src/programs/callModel.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { type LogEntry, Logging } from "../../src/services/logging.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { openAiCompatible } from "../../src/services/providers/openaiCompatible/client.js"
import { parseRetryAfter } from "../../src/services/providers/openaiCompatible/response.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import type { Behavior } from "../support/fakeOpenRouter.js"
import { itClock } from "../support/itClock.js"
import { itLive } from "../support/itLive.js"
import { realHttpClientLayer, sharedHttpClientLayer } from "../support/realHttpClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { pendingSleeps } from "../support/testClock.js"
import { resetFakeBeforeEach } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

/** Distinctive, so that a leak anywhere is unmistakable. */
const KEY = "sk-or-v1-SECRET-5f3c9a1e7d2b4c6a8e0f1a2b3c4d5e6f"

const provider = withFakeProvider()
const { root: tmp } = tempRoot("pllm-client-")

resetFakeBeforeEach(provider)

const settingsFor = (overrides: Partial<SettingsValue> = {}): SettingsValue =>
  provider.settings({
    apiKey: Option.some(Redacted.make(KEY)),
    appUrl: "https://example.test/parallel",
    appTitle: "parallel-llm tests",
    retryBaseDelayMs: 10,
    ...overrides
  })

/** The real client over the pooled HTTP client as main.ts composes it, its own Agent made and destroyed with the layer. */
const pooledClientLayer = (overrides: Partial<SettingsValue> = {}) =>
  ModelClient.Default.pipe(Layer.provide(Layer.merge(Settings.Test(settingsFor(overrides)), realHttpClientLayer)))

/**
 * The real client over the same HTTP client on the worker's kept Agent (realHttpClient.ts): for the tests where the
 * pool's life is not the point ("pooled connections" counts a layer's connections over `pooledClientLayer`).
 */
const clientLayer = (overrides: Partial<SettingsValue> = {}) =>
  ModelClient.Default.pipe(Layer.provide(Layer.merge(Settings.Test(settingsFor(overrides)), sharedHttpClientLayer)))

const ask = (model: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model,
  messages: [{ role: "user", content: `Question for ${model}` }],
  ...extra
})

/** One attempt, its stream of parts folded as callModel folds it. */
const answerOf = (client: ModelClient, request: ModelRequest, hooks: FoldHooks = {}) =>
  foldAnswer(request.model, client.stream(request), hooks)

const complete = (request: ModelRequest, hooks: FoldHooks = {}) => Effect.flatMap(ModelClient, (client) => answerOf(client, request, hooks))

/** One attempt against `behavior`; the typed error it fails with. */
const failureOf = (model: string, behavior: Behavior) =>
  Effect.gen(function*() {
    provider.fake.setScript({ [model]: behavior })
    return yield* complete(ask(model)).pipe(Effect.flip, Effect.provide(clientLayer()))
  })

const chatCount = (model: string) => provider.log().filter((r) => r.model === model).length

describe("ModelClient.stream (OpenAI-compatible): a good answer", () => {
  it.live("returns content, servedBy, usage with cost and finishReason, and sends the right request", () =>
    Effect.gen(function*() {
      provider.fake.setScript({
        "good/model": {
          kind: "ok",
          content: "The answer is 42.",
          servedBy: "good/model-2025-06-01",
          usage: { prompt_tokens: 11, completion_tokens: 7, cost: 0.00123 },
          finishReason: "length"
        }
      })
      const completion = yield* complete(
        ask("good/model", {
          messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Meaning of life?" }],
          temperature: 0.3,
          maxTokens: 256
        })
      ).pipe(Effect.provide(clientLayer()))
      expect(completion.content).toBe("The answer is 42.")
      expect(completion.servedBy).toBe("good/model-2025-06-01")
      expect(completion.usage).toEqual({ promptTokens: 11, completionTokens: 7, cost: 0.00123 })
      expect(completion.finishReason).toBe("length")

      const [request, ...others] = provider.log()
      expect(others).toHaveLength(0)
      expect(request!.method).toBe("POST")
      expect(request!.path).toBe("/api/v1/chat/completions")
      expect(request!.headers["authorization"]).toBe(`Bearer ${KEY}`)
      expect(request!.headers["http-referer"]).toBe("https://example.test/parallel")
      expect(request!.headers["x-title"]).toBe("parallel-llm tests")
      expect(String(request!.headers["content-type"])).toContain("application/json")
      expect(request!.body).toMatchObject({
        model: "good/model",
        messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Meaning of life?" }],
        temperature: 0.3,
        max_tokens: 256
      })
    }))

  it.live("leaves temperature and max_tokens out when they are not set; no usage cost means no cost field", () =>
    Effect.gen(function*() {
      const completion = yield* complete(ask("plain/model")).pipe(Effect.provide(clientLayer()))
      expect(completion.content).toBe("Answer from plain/model")
      expect(completion.servedBy).toBe("plain/model")
      const body = provider.log()[0]!.body as Record<string, unknown>
      expect(body).not.toHaveProperty("max_tokens")
      expect(body).not.toHaveProperty("temperature")
      expect(body["model"]).toBe("plain/model")
    }))

  it.live("a call under a span of ours sends no traceparent: the pooled client's requests make no span (set once, httpClientPool.ts)", () =>
    Effect.gen(function*() {
      const completion = yield* complete(ask("plain/model")).pipe(Effect.withSpan("outer"), Effect.provide(clientLayer()))
      expect(completion.content).toBe("Answer from plain/model")
      const [request] = provider.log()
      expect(request!.headers["traceparent"]).toBeUndefined()
      expect(request!.headers["b3"]).toBeUndefined()
    }))

  it.live("a streamed answer hands each network read's text to the fold's onDelta as it arrives: the pieces make up the answer", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "delta/model": { kind: "trickle", content: "one two three four five six", chunks: 4, chunkDelayMs: 15 } })
      const pieces: Array<string> = []
      const completion = yield* complete(
        ask("delta/model"),
        { onDelta: (text) => Effect.sync(() => void pieces.push(text)) }
      ).pipe(Effect.provide(clientLayer({ stream: true })))
      expect(completion.content).toBe("one two three four five six")
      // Four writes 15 ms apart: more than one read, whatever the machine's load.
      expect(pieces.length).toBeGreaterThan(1)
      expect(pieces.join("")).toBe(completion.content)
      expect(pieces).not.toContain("")
    }))

  it.live("sends no Authorization header when there is no key (loopback servers)", () =>
    Effect.gen(function*() {
      yield* complete(ask("nokey/model")).pipe(Effect.provide(clientLayer({ apiKey: Option.none() })))
      expect(provider.log()[0]!.headers["authorization"]).toBeUndefined()
    }))
})

interface FailureCase {
  readonly name: string
  readonly behavior: Behavior
  readonly tag: ProviderError["_tag"]
  readonly transient: boolean
  readonly httpStatus?: number
  readonly message?: RegExp
  readonly check?: (error: ProviderError) => void
}

const statusCase = (status: number, tag: ProviderError["_tag"], transient: boolean, message?: RegExp): FailureCase => ({
  name: `HTTP ${status}`,
  behavior: { kind: "status", status },
  tag,
  transient,
  httpStatus: status,
  ...(message ? { message } : {})
})

const failureCases: ReadonlyArray<FailureCase> = [
  {
    name: "429 with Retry-After in seconds",
    behavior: { kind: "status", status: 429, retryAfter: 2 },
    tag: "RateLimited",
    transient: true,
    httpStatus: 429,
    message: /429/,
    check: (e) => expect(e._tag === "RateLimited" && e.retryAfterMs).toBe(2000)
  },
  {
    name: "429 with Retry-After as an HTTP date",
    behavior: { kind: "status", status: 429, retryAfter: new Date(Date.now() + 60_000).toUTCString() },
    tag: "RateLimited",
    transient: true,
    httpStatus: 429,
    check: (e) => {
      const ms = e._tag === "RateLimited" ? e.retryAfterMs : undefined
      expect(ms).toBeGreaterThan(30_000)
      expect(ms).toBeLessThanOrEqual(61_000)
    }
  },
  {
    name: "429 without Retry-After",
    behavior: { kind: "status", status: 429 },
    tag: "RateLimited",
    transient: true,
    httpStatus: 429,
    check: (e) => expect(e._tag === "RateLimited" && e.retryAfterMs).toBeUndefined()
  },
  statusCase(401, "Unauthorized", false, /OPENROUTER_API_KEY/),
  statusCase(402, "OutOfCredits", false, /credits/i),
  statusCase(403, "Forbidden", false, /flagged by moderation/),
  statusCase(400, "BadRequest", false, /Bad Request/),
  statusCase(404, "BadRequest", false, /No endpoints/),
  statusCase(413, "BadRequest", false),
  statusCase(422, "BadRequest", false),
  statusCase(408, "ProviderFailure", true),
  statusCase(500, "ProviderFailure", true, /Internal Server Error/),
  statusCase(502, "ProviderFailure", true, /Provider returned error/),
  statusCase(503, "ProviderFailure", true),
  statusCase(524, "ProviderFailure", true),
  statusCase(529, "ProviderFailure", true),
  {
    name: "503 with Retry-After",
    behavior: { kind: "status", status: 503, retryAfter: 3 },
    tag: "ProviderFailure",
    transient: true,
    httpStatus: 503,
    check: (e) => expect(e._tag === "ProviderFailure" && e.retryAfterMs).toBe(3000)
  },
  {
    name: "an HTML 502 page from a proxy",
    behavior: { kind: "html" },
    tag: "ProviderFailure",
    transient: true,
    httpStatus: 502,
    message: /HTML/,
    check: (e) => expect(e.message).not.toContain("<html")
  },
  // Not a chat completion at HTTP 200: transient, like the 5xx a proxy would have sent instead.
  { name: "200 with an HTML page", behavior: { kind: "html", status: 200 }, tag: "InvalidResponse", transient: true, message: /HTML/ },
  { name: "200 with malformed JSON", behavior: { kind: "malformed" }, tag: "InvalidResponse", transient: true, message: /cut short/ },
  { name: "200 with empty choices", behavior: { kind: "emptyChoices" }, tag: "InvalidResponse", transient: true, message: /no choices/ },
  { name: "200 with null content", behavior: { kind: "nullContent" }, tag: "InvalidResponse", transient: true, message: /null/ },
  { name: "200 with empty content", behavior: { kind: "emptyContent" }, tag: "InvalidResponse", transient: true, message: /empty/ },
  {
    name: "200 with JSON of the wrong shape: one short line naming the field, no dump of the schema",
    behavior: { kind: "status", status: 200, body: { choices: [{ message: { content: 42 } }] } },
    tag: "InvalidResponse",
    transient: true,
    message: /^Invalid response: a body that is not a chat completion \(wrong shape at choices\.0\.message\.content\)$/
  },
  {
    name: "an error object with a 5xx code in a 200 body",
    behavior: { kind: "errorIn200", code: 502, message: "Upstream provider exploded" },
    tag: "ErrorInBody",
    transient: true,
    message: /Upstream provider exploded/,
    check: (e) => expect(e._tag === "ErrorInBody" && e.code).toBe(502)
  },
  {
    // A 429 is a rate limit wherever it arrives: the same tag and status as an HTTP 429.
    name: "an error object with code 429 in a 200 body",
    behavior: { kind: "errorIn200", code: 429, message: "slow down" },
    tag: "RateLimited",
    transient: true,
    httpStatus: 429,
    message: /slow down/
  },
  {
    name: "an error object with code 400 in a 200 body",
    behavior: { kind: "errorIn200", code: 400, message: "context too long" },
    tag: "ErrorInBody",
    transient: false,
    message: /context too long/,
    check: (e) => expect(e._tag === "ErrorInBody" && e.code).toBe(400)
  },
  {
    name: "a choice with finish_reason error",
    behavior: { kind: "choiceError", code: 502, message: "Provider disconnected" },
    tag: "ErrorInBody",
    transient: true,
    message: /Provider disconnected/
  },
  {
    name: "a connection reset",
    behavior: { kind: "reset" },
    tag: "NetworkError",
    transient: true,
    message: /Network error/
  }
]

describe("ModelClient.stream (OpenAI-compatible): each failure maps to its typed error", () => {
  failureCases.forEach((c, i) => {
    it.live(c.name, () =>
      Effect.gen(function*() {
        const model = `fail/case-${i}`
        const error = yield* failureOf(model, c.behavior)
        expect(error._tag).toBe(c.tag)
        expect(error.model).toBe(model)
        expect(isTransient(error)).toBe(c.transient)
        if (c.httpStatus !== undefined) expect(httpStatusOf(error)).toBe(c.httpStatus)
        if (c.message) expect(error.message).toMatch(c.message)
        expect(error.message).not.toContain(KEY)
        c.check?.(error)
        expect(chatCount(model)).toBe(1)
      }))
  })
})

describe("a 429 is typed by the provider's code wherever it arrives", () => {
  for (
    const [where, behavior, stream] of [
      ["the HTTP status", { kind: "status", status: 429 }, false],
      ["a 200 body", { kind: "errorIn200", code: 429, message: "Rate limit exceeded" }, false],
      ["a 200 body of a streamed request", { kind: "errorIn200", code: "429", message: "Rate limit exceeded" }, true],
      ["an event mid-stream", { kind: "streamError", partial: "The first words", code: 429, message: "Rate limit exceeded" }, true]
    ] satisfies ReadonlyArray<readonly [string, Behavior, boolean]>
  ) {
    it.live(`in ${where}: RateLimited with httpStatus 429, transient`, () =>
      Effect.gen(function*() {
        const model = `limited/${where.replace(/\W+/g, "-")}`
        provider.fake.setScript({ [model]: behavior })
        const streamed = streamedText()
        const error = yield* complete(ask(model), { streamed }).pipe(Effect.flip, Effect.provide(clientLayer({ stream })))
        expect(error._tag).toBe("RateLimited")
        expect(httpStatusOf(error)).toBe(429)
        expect(isTransient(error)).toBe(true)
        // The text before the error stays with the fold, which keeps it as `.partial.md`.
        if (behavior.kind === "streamError") expect(textSoFar(streamed)).toBe("The first words")
      }))
  }
})

describe("parseRetryAfter", () => {
  it("reads delta-seconds, HTTP dates, and ignores garbage", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0)
    expect(parseRetryAfter("5", now)).toBe(5000)
    expect(parseRetryAfter("0", now)).toBe(0)
    expect(parseRetryAfter("1.5", now)).toBe(1500)
    expect(parseRetryAfter(" 7 ", now)).toBe(7000)
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000)
    expect(parseRetryAfter("Thu, 01 Jan 2026 12:00:10 GMT", now)).toBe(10_000)
    expect(parseRetryAfter(new Date(now - 30_000).toUTCString(), now)).toBe(0)
    expect(parseRetryAfter("-3", now)).toBe(0)
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
    expect(parseRetryAfter("", now)).toBeUndefined()
    expect(parseRetryAfter("soon", now)).toBeUndefined()
  })
})

describe("ModelClient.listModels", () => {
  it.live("reads ids, context lengths and prices (USD per million tokens)", () =>
    Effect.gen(function*() {
      provider.fake.setModels([
        { id: "a/one", name: "A One", context_length: 200_000, pricing: { prompt: "0.000003", completion: "0.000015" } },
        { id: "b/two" }
      ])
      const models = yield* Effect.flatMap(ModelClient, (c) => c.listModels()).pipe(Effect.provide(clientLayer()))
      expect(models.map((m) => m.id)).toEqual(["a/one", "b/two"])
      expect(models[0]!.contextLength).toBe(200_000)
      expect(models[0]!.promptPrice).toBeCloseTo(3, 6)
      expect(models[0]!.completionPrice).toBeCloseTo(15, 6)
      const request = provider.fake.requests.find((r) => r.path === "/api/v1/models")
      expect(request?.method).toBe("GET")
      expect(request?.headers["authorization"]).toBe(`Bearer ${KEY}`)
    }))
})

describe("callModel with the real client (its long waits on the TestClock)", () => {
  const policy = { retries: 3, retryBaseDelayMs: 10, timeoutMs: 30_000 }

  it.live("500 then success: ok after 2 attempts", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "retry/once": [{ kind: "status", status: 500 }, { kind: "ok", content: "second time lucky" }] })
      const call = yield* callModel(ask("retry/once"), policy).pipe(Effect.provide(clientLayer()))
      expect(Either.isRight(call.result)).toBe(true)
      expect(Either.getOrThrow(call.result).content).toBe("second time lucky")
      expect(call.attempts).toBe(2)
      expect(chatCount("retry/once")).toBe(2)
    }))

  it.live("a connection reset then success: retried", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "retry/reset": [{ kind: "reset" }, { kind: "ok" }] })
      const call = yield* callModel(ask("retry/reset"), policy).pipe(Effect.provide(clientLayer()))
      expect(Either.isRight(call.result)).toBe(true)
      expect(call.attempts).toBe(2)
    }))

  it.live("an ErrorInBody with a transient code then success: retried", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "retry/body": [{ kind: "errorIn200", code: 503 }, { kind: "ok" }] })
      const call = yield* callModel(ask("retry/body"), policy).pipe(Effect.provide(clientLayer()))
      expect(Either.isRight(call.result)).toBe(true)
      expect(call.attempts).toBe(2)
    }))

  it.live("502 forever: ProviderFailure after retries + 1 attempts, exactly that many requests", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "down/always": { kind: "status", status: 502 } })
      const call = yield* callModel(ask("down/always"), { ...policy, retries: 2 }).pipe(Effect.provide(clientLayer()))
      const error = Either.getLeft(call.result).pipe(Option.getOrThrow)
      expect(error._tag).toBe("ProviderFailure")
      expect(httpStatusOf(error)).toBe(502)
      expect(call.attempts).toBe(3)
      expect(chatCount("down/always")).toBe(3)
    }))

  for (
    const behavior of [
      { kind: "malformed" },
      { kind: "html", status: 200 },
      { kind: "emptyChoices" },
      { kind: "nullContent" }
    ] satisfies ReadonlyArray<Behavior>
  ) {
    it.live(`a 200 that is not a chat completion (${behavior.kind}) is retried under the same schedule`, () =>
      Effect.gen(function*() {
        const model = `invalid/${behavior.kind}`
        provider.fake.setScript({ [model]: [behavior, { kind: "ok", content: "a real answer" }] })
        const call = yield* callModel(ask(model), policy).pipe(Effect.provide(clientLayer()))
        expect(Either.getOrThrow(call.result).content).toBe("a real answer")
        expect(call.attempts).toBe(2)
        expect(chatCount(model)).toBe(2)
      }))
  }

  for (
    const behavior of [
      { kind: "status", status: 401 },
      { kind: "status", status: 400 },
      { kind: "status", status: 402 },
      { kind: "status", status: 403 },
      { kind: "errorIn200", code: 400 }
    ] satisfies ReadonlyArray<Behavior>
  ) {
    const label = behavior.kind === "status" ? `HTTP ${behavior.status}` : `ErrorInBody code ${behavior.code}`
    it.live(`${label}: exactly 1 request, never retried`, () =>
      Effect.gen(function*() {
        const model = `permanent/${label.replace(/\W+/g, "-")}`
        provider.fake.setScript({ [model]: behavior })
        const call = yield* callModel(ask(model), policy).pipe(Effect.provide(clientLayer()))
        expect(Either.isLeft(call.result)).toBe(true)
        expect(call.attempts).toBe(1)
        expect(chatCount(model)).toBe(1)
      }))
  }

  itClock.effect("429 with Retry-After: the next attempt waits at least that long", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "limited/once": [{ kind: "status", status: 429, retryAfter: 1 }, { kind: "ok" }] })
      const fiber = yield* callModel(ask("limited/once"), policy).pipe(Effect.provide(clientLayer()), Effect.fork)
      // Once the 429 is in, two sleeps: the 30 s budget and the backoff, which Retry-After stretches from 10 ms to 1 s.
      const [backoff] = yield* pendingSleeps(2)
      expect(backoff).toBeGreaterThanOrEqual(1_000)
      expect(chatCount("limited/once")).toBe(1)
      yield* TestClock.adjust(backoff!)
      const call = yield* Fiber.join(fiber)
      expect(Either.isRight(call.result)).toBe(true)
      expect(call.attempts).toBe(2)
      expect(chatCount("limited/once")).toBe(2)
    }))

  itClock.effect("a hang with a 1 s budget: Timeout, and the HTTP request is really aborted", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "slow/hang": { kind: "hang" } })
      const outcome = yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(callModel(ask("slow/hang"), { ...policy, timeoutMs: 1_000 }))
        yield* Effect.promise(() => waitFor("the request at the fake", () => provider.fake.inFlight === 1))
        yield* TestClock.adjust(1_000)
        const call = yield* Fiber.join(fiber)
        // Still inside the client's layer: the agent is alive, so only the interruption can have aborted it.
        yield* Effect.promise(() => waitFor("the fake to see the request aborted", () => provider.fake.abortedRequests().length >= 1))
        return call
      }).pipe(Effect.provide(clientLayer()))
      const error = Either.getLeft(outcome.result).pipe(Option.getOrThrow)
      expect(error._tag).toBe("Timeout")
      expect(error._tag === "Timeout" && error.timeoutMs).toBe(1_000)
      expect(isTransient(error)).toBe(false)
      expect(outcome.attempts).toBe(1)
      expect(provider.fake.abortedRequests().map((r) => r.model)).toEqual(["slow/hang"])
      expect(provider.fake.inFlight).toBe(0)
    }))

  itClock.effect("the time budget covers the backoff too: a long Retry-After ends in Timeout", () =>
    Effect.gen(function*() {
      provider.fake.setScript({ "limited/long": { kind: "status", status: 429, retryAfter: 60 } })
      const fiber = yield* callModel(ask("limited/long"), { ...policy, timeoutMs: 1_500 }).pipe(Effect.provide(clientLayer()), Effect.fork)
      // The budget's 1.5 s, then the 60 s backoff: the budget ends the call first.
      expect(yield* pendingSleeps(2)).toEqual([1_500, expect.any(Number)])
      yield* TestClock.adjust(1_500)
      const call = yield* Fiber.join(fiber)
      const error = Either.getLeft(call.result).pipe(Option.getOrThrow)
      expect(error._tag).toBe("Timeout")
      expect(chatCount("limited/long")).toBe(1)
    }))
})

/**
 * Lets the event loop turn once. Undici resolves a response body's end a moment before it marks the
 * connection idle, so a request dispatched in the very same tick finds the socket still busy and opens
 * a second one (plain undici does the same: see the tight-loop test). Any real caller does some I/O
 * between calls (writing the answer, a backoff), which is what this stands for.
 */
const turn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

describe("pooled connections", () => {
  it.live("20 sequential calls through one layer use exactly 1 TCP connection", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient
      for (let i = 0; i < 20; i++) {
        const completion = yield* answerOf(client, ask(`pool/seq-${i}`))
        expect(completion.content).toBe(`Answer from pool/seq-${i}`)
        yield* turn
      }
      expect(provider.log()).toHaveLength(20)
      expect(provider.fake.connections).toBe(1)
    }).pipe(Effect.provide(pooledClientLayer())))

  it.live("20 sequential streamed calls use exactly 1 TCP connection: the body is read to its end after [DONE]", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient
      for (let i = 0; i < 20; i++) {
        const completion = yield* answerOf(client, ask(`pool/stream-${i}`))
        expect(completion.content).toBe(`Answer from pool/stream-${i}`)
        yield* turn
      }
      expect(provider.fake.connections).toBe(1)
    }).pipe(Effect.provide(pooledClientLayer({ stream: true }))))

  it.live("a response that ends a moment after [DONE]: waited for, and its connection reused", () =>
    Effect.gen(function*() {
      provider.fake.setDefault({ kind: "ok", endAfterDoneMs: 50 })
      const client = yield* ModelClient
      // Two calls: the second on the first one's connection.
      for (let i = 0; i < 2; i++) {
        expect((yield* answerOf(client, ask(`pool/late-end-${i}`))).content).toBe(`Answer from pool/late-end-${i}`)
        yield* turn
      }
      expect(provider.fake.connections).toBe(1)
      expect(provider.fake.abortedRequests()).toHaveLength(0)
    }).pipe(Effect.provide(pooledClientLayer({ stream: true }))))

  it.live("a streamed answer's Finish says its end is at hand when the body ended with [DONE], and not when it is still open", () =>
    Effect.gen(function*() {
      const finishOf = (model: string) =>
        Effect.flatMap(ModelClient, (client) => Stream.runCollect(client.stream(ask(model)))).pipe(
          Effect.map((parts) => Chunk.toArray(parts).find((part) => part._tag === "Finish"))
        )
      provider.fake.setScript({ "pool/late": { kind: "ok", content: "later", endAfterDoneMs: 50 } })
      expect(yield* finishOf("pool/ends")).toMatchObject({ _tag: "Finish", ended: true })
      expect(yield* finishOf("pool/late")).not.toHaveProperty("ended")
    }).pipe(Effect.provide(pooledClientLayer({ stream: true }))))

  itClock.effect(
    "a response kept open after [DONE]: the answer is returned and only that connection is dropped",
    () =>
      Effect.gen(function*() {
        provider.fake.setScript({ "pool/never-ends": { kind: "ok", content: "complete anyway", endAfterDoneMs: 600_000 } })
        const fiber = yield* Effect.fork(complete(ask("pool/never-ends")).pipe(Effect.provide(pooledClientLayer({ stream: true }))))
        // Once [DONE] is in, the one sleep: how long the rest of the body may take (answerFold's 500 ms), passed on the TestClock.
        const [afterDone = 0] = yield* pendingSleeps(1)
        expect(afterDone).toBe(500)
        yield* TestClock.adjust(afterDone)
        const completion = yield* Fiber.join(fiber)
        expect(completion.content).toBe("complete anyway")
        yield* Effect.promise(() => waitFor("the open response to be dropped", () => provider.fake.abortedRequests().length === 1))
      })
  )

  it.live("20 sequential calls back to back in one tick still reuse connections (at most 2)", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient
      for (let i = 0; i < 20; i++) yield* answerOf(client, ask(`pool/tight-${i}`))
      expect(provider.log()).toHaveLength(20)
      expect(provider.fake.connections).toBeLessThanOrEqual(2)
    }).pipe(Effect.provide(pooledClientLayer())))

  it.live("4 rounds of 5 concurrent calls use at most 5 connections", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient
      for (let round = 0; round < 4; round++) {
        const results = yield* Effect.forEach(
          [0, 1, 2, 3, 4],
          (i) => answerOf(client, ask(`pool/par-${round}-${i}`)),
          { concurrency: "unbounded" }
        )
        expect(results).toHaveLength(5)
        yield* turn
      }
      expect(provider.log()).toHaveLength(20)
      expect(provider.fake.connections).toBeGreaterThanOrEqual(1)
      expect(provider.fake.connections).toBeLessThanOrEqual(5)
    }).pipe(Effect.provide(pooledClientLayer())))

  it.live("the provider can be built directly from Settings and an HttpClient", () =>
    Effect.gen(function*() {
      const provider = yield* openAiCompatible
      const completion = yield* foldAnswer("direct/model", provider.stream(ask("direct/model")))
      expect(completion.content).toBe("Answer from direct/model")
    }).pipe(Effect.provide(Layer.merge(Settings.Test(settingsFor()), realHttpClientLayer))))
})

/** Every file under `dir`, recursively, with its text. */
const readTree = (dir: string): ReadonlyArray<{ file: string; text: string }> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? readTree(full) : [{ file: full, text: fs.readFileSync(full, "utf8") }]
  })

describe("the API key is never logged", () => {
  it.live("a run with many kinds of failure leaks the key nowhere, though the provider got it", () =>
    Effect.gen(function*() {
      provider.fake.setScript({
        "leak/unauthorized": { kind: "status", status: 401 },
        "leak/flaky": { kind: "status", status: 500 },
        "leak/malformed": { kind: "malformed" },
        "leak/reset": { kind: "reset" },
        "leak/good": { kind: "ok", content: "the one good answer" },
        "leak/synth": { kind: "ok", content: "the synthesis" }
      })
      const outputDir = path.join(tmp, "runs-leak")
      const logFile = path.join(tmp, "leak.log")
      const settings = settingsFor({
        models: ["leak/unauthorized", "leak/flaky", "leak/malformed", "leak/reset", "leak/good"],
        synthesizer: "leak/synth",
        fallbackSynthesizers: [],
        retries: 2,
        retryBaseDelayMs: 10,
        outputDir,
        logLevel: "debug",
        logFile: Option.some(logFile)
      })
      const entries: Array<LogEntry> = []
      const stderrLines: Array<string> = []
      const services = Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
        Layer.provideMerge(Settings.Test(settings)),
        Layer.provide(Layer.mergeAll(sharedHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
        Layer.merge(Logging.Test(settings, [(entry) => entries.push(entry)], (line) => stderrLines.push(line)))
      )

      const result = yield* runPipeline({ prompt: "Where does the key go?" }).pipe(Effect.provide(services))

      // The run itself went as scripted.
      expect(result.manifest.status).toBe("partial")
      expect(result.final).toBe("the synthesis")
      const byModel = new Map(result.manifest.candidates.map((c) => [c.model, c]))
      expect(byModel.get("leak/unauthorized")?.error?.tag).toBe("Unauthorized")
      expect(byModel.get("leak/unauthorized")?.attempts).toBe(1)
      expect(byModel.get("leak/flaky")?.error?.tag).toBe("ProviderFailure")
      expect(byModel.get("leak/flaky")?.attempts).toBe(3)
      expect(byModel.get("leak/malformed")?.error?.tag).toBe("InvalidResponse")
      expect(byModel.get("leak/reset")?.error?.tag).toBe("NetworkError")
      expect(byModel.get("leak/good")?.status).toBe("ok")

      // The provider did receive the key, on every call.
      const chats = provider.log()
      expect(chats.length).toBeGreaterThanOrEqual(1 + 3 + 1 + 3 + 1 + 1)
      for (const request of chats) expect(request.headers["authorization"]).toBe(`Bearer ${KEY}`)

      // ...and it went nowhere else.
      expect(entries.length).toBeGreaterThan(5)
      expect(entries.some((e) => e.level === "debug")).toBe(true)
      for (const entry of entries) {
        expect(entry.text).not.toContain(KEY)
        expect(entry.context.join(" ")).not.toContain(KEY)
      }
      expect(stderrLines.length).toBe(entries.length)
      for (const line of stderrLines) expect(line).not.toContain(KEY)
      for (const record of result.manifest.candidates) expect(record.error?.message ?? "").not.toContain(KEY)
      expect(JSON.stringify(result)).not.toContain(KEY)

      const files = readTree(result.runDir)
      expect(files.map((f) => path.relative(result.runDir, f.file)).sort()).toEqual(
        ["final.md", "prompt.md", path.join("responses", "05-leak-good.md"), "run.json"].sort()
      )
      for (const { file, text } of files) expect(text, file).not.toContain(KEY)

      const logText = fs.readFileSync(logFile, "utf8")
      expect(logText.split("\n").filter((l) => l !== "").length).toBe(entries.length)
      expect(logText).toContain("leak/flaky")
      expect(logText).not.toContain(KEY)
      // Not even a recognisable piece of it.
      expect(logText).not.toContain(KEY.slice(-16))
    }))

  it.live("a key echoed in another letter case or by its leading part is redacted from answers and errors", () =>
    Effect.gen(function*() {
      const echo = `upper ${KEY.toUpperCase()}, lower ${KEY.toLowerCase()}, cut ${KEY.slice(0, 20)}… and the rest of the answer`
      const leaks = (text: string) => text.toLowerCase().includes(KEY.slice(0, 16).toLowerCase())
      for (const stream of [false, true]) {
        provider.fake.setScript({ "echo/answer": { kind: "ok", content: echo } })
        const completion = yield* complete(ask("echo/answer")).pipe(Effect.provide(clientLayer({ stream })))
        expect(leaks(completion.content), completion.content).toBe(false)
        expect(completion.content).toContain("and the rest of the answer")
      }
      const error = yield* failureOf("echo/error", { kind: "errorIn200", code: 400, message: `bad key ${KEY.toUpperCase().slice(0, 24)}` })
      expect(leaks(error.message), error.message).toBe(false)
    }))

  it.live("a short key is redacted from nothing: it cannot corrupt the bodies it appears in", () =>
    Effect.gen(function*() {
      for (const stream of [false, true]) {
        const completion = yield* complete(ask("short/key")).pipe(
          Effect.provide(clientLayer({ stream, apiKey: Option.some(Redacted.make("e")) }))
        )
        expect(completion.content).toBe("Answer from short/key")
      }
    }))

  // Some OpenAI-compatible servers and proxies quote the key they received in a 401/400 body
  // ("Received API Key = sk-..."). The client copies provider messages into its errors, which go to
  // logs and run.json: the contract says the key never appears in an error message.
  it.live("a provider that echoes the key in its error body does not get it into the error message", () =>
    Effect.gen(function*() {
      const echoed = { error: { code: 401, message: `Authentication Error, invalid key. Received API Key = ${KEY}` } }
      for (
        const [model, behavior] of [
          ["echo/json", { kind: "status", status: 401, body: echoed }],
          ["echo/text", { kind: "status", status: 400, body: `bad request from key ${KEY}` }],
          ["echo/in200", { kind: "errorIn200", code: 400, message: `Received API Key = ${KEY}` }]
        ] as const
      ) {
        const error = yield* failureOf(model, behavior)
        expect(error.message, `${model}: ${error._tag}`).not.toContain(KEY)
      }
    }))
})

describe("streamed bodies, read from undici's Readable (readable.ts)", () => {
  itLive.effect(
    "a streamed response that is not undici's (another HttpClient): its stream is piped into the splitter",
    () =>
      Effect.gen(function*() {
        const events = [
          { model: "web/x", choices: [{ delta: { content: "from " } }] },
          { choices: [{ delta: { content: "a web Response" }, finish_reason: "stop" }] }
        ].map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
        const web = HttpClient.make((request) =>
          Effect.succeed(HttpClientResponse.fromWeb(
            request,
            new Response(`${events.join("")}data: [DONE]\n\n`, { headers: { "content-type": "text/event-stream" } })
          ))
        )
        const layer = ModelClient.Default.pipe(
          Layer.provide(Layer.merge(Settings.Test(settingsFor({ stream: true })), Layer.succeed(HttpClient.HttpClient, web)))
        )
        const completion = yield* complete(ask("web/x")).pipe(Effect.provide(layer))
        expect(completion.content).toBe("from a web Response")
        expect(completion.finishReason).toBe("stop")
      })
  )

  it.live("a body cut mid-stream (the connection reset): a NetworkError while reading the answer, the text so far kept", () =>
    Effect.gen(function*() {
      // A server that sends one delta, then drops the connection without ending the response.
      const server = http.createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify({ model: "cut/x", choices: [{ index: 0, delta: { content: "half an" } }] })}\n\n`, () => {
          setTimeout(() => res.socket?.destroy(), 20)
        })
      })
      yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))),
        () => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const streamed = streamedText()
      const error = yield* complete(ask("cut/x"), { streamed }).pipe(
        Effect.flip,
        Effect.provide(clientLayer({ stream: true, baseUrl: `http://127.0.0.1:${port}/api/v1` }))
      )
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toMatch(/^Network error while reading the answer: /)
      expect(textSoFar(streamed)).toBe("half an")
    }).pipe(Effect.scoped))

  it.live("a streamed answer read by our reader is taken out of the platform's abort-when-collected registry", () =>
    Effect.gen(function*() {
      // The platform aborts a response's request when the response is collected, unless its own body accessors
      // ran; ours read undici's body, so the client says so (body.ts `bodyTakenOver`). Spied on, the registry sees it.
      const registry: unknown = globalValue("@effect/platform/HttpClient/responseRegistry", () => undefined)
      if (typeof registry !== "object" || registry === null) throw new Error("the platform's registry is not found")
      const taken: Array<object> = []
      const unregister: unknown = Reflect.get(registry, "unregister")
      if (typeof unregister !== "function") throw new Error("the platform's registry has no unregister")
      Reflect.set(registry, "unregister", (response: object) => {
        taken.push(response)
        return Reflect.apply(unregister, registry, [response])
      })
      const completion = yield* complete(ask("read/all")).pipe(
        Effect.provide(clientLayer({ stream: true })),
        Effect.ensuring(Effect.sync(() => Reflect.set(registry, "unregister", unregister)))
      )
      expect(completion.content).not.toBe("")
      expect(taken).toHaveLength(1)
    }))

  it.live("a streamed answer interrupted mid-body: the HTTP request is really aborted, the text so far kept", () =>
    Effect.gen(function*() {
      // The first piece at once, the second 30 s later: the call is interrupted in between.
      provider.fake.setScript({
        "slow/mid": { kind: "trickle", content: "first, then never", chunks: 2, firstDelayMs: 0, chunkDelayMs: 30_000 }
      })
      const streamed = streamedText()
      const outcome = yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(complete(ask("slow/mid"), { streamed }))
        yield* Effect.promise(() => waitFor("the first delta", () => textSoFar(streamed) !== undefined))
        yield* Fiber.interrupt(fiber)
        // Still inside the client's layer: the agent is alive, so only the interruption can have aborted it.
        yield* Effect.promise(() => waitFor("the fake to see the request aborted", () => provider.fake.abortedRequests().length >= 1))
        return textSoFar(streamed)
      }).pipe(Effect.provide(clientLayer({ stream: true })))
      expect(outcome).toBeDefined()
      expect("first, then never".startsWith(outcome ?? "")).toBe(true)
      expect(outcome).not.toBe("first, then never")
      expect(provider.fake.abortedRequests().map((r) => r.model)).toEqual(["slow/mid"])
    }))
})
