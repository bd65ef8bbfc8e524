import { HttpClient, HttpClientRequest, type HttpClientError, type HttpClientResponse } from "@effect/platform"
import * as Sse from "@effect/experimental/Sse"
import { Chunk, Context, Deferred, Duration, Effect, Layer, Option, ParseResult, Redacted, Schema, Stream } from "effect"
import {
  BadRequest,
  ErrorInBody,
  Forbidden,
  InvalidResponse,
  isTransientStatus,
  NetworkError,
  OutOfCredits,
  type ProviderError,
  ProviderFailure,
  RateLimited,
  ResponseTooLarge,
  Unauthorized
} from "../domain/errors.js"
import { Settings } from "./Settings.js"
import { makeSseDecoder } from "./sseEvents.js"

/** How long the rest of a streamed body may take to end after `[DONE]` before the connection is dropped. */
const DRAIN_AFTER_DONE = Duration.millis(500)

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export interface CompletionRequest {
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number
  readonly maxTokens?: number
  /** Called with each piece of a streamed answer as it arrives (live progress). */
  readonly onDelta?: ((text: string) => Effect.Effect<void>) | undefined
}

export interface Completion {
  readonly content: string
  /** The model that really answered (and is billed): OpenRouter may route to another one. */
  readonly servedBy: string
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number; readonly cost?: number }
  readonly finishReason: string | undefined
}

export interface ModelInfo {
  readonly id: string
  readonly name?: string | undefined
  readonly contextLength?: number | undefined
  /** USD per million tokens. */
  readonly promptPrice?: number | undefined
  readonly completionPrice?: number | undefined
}

// --- Wire formats, decoded rather than trusted ---

const ErrorObject = Schema.Struct({
  code: Schema.optional(Schema.Union(Schema.Number, Schema.String, Schema.Null)),
  message: Schema.optional(Schema.NullOr(Schema.String)),
  metadata: Schema.optional(Schema.Unknown)
})

/** A message (whole answers) or a delta (streamed pieces): both carry optional, nullable text. */
const TextContent = Schema.optional(Schema.NullOr(Schema.Struct({
  content: Schema.optional(Schema.NullOr(Schema.String))
})))

const choiceEnd = {
  finish_reason: Schema.optional(Schema.NullOr(Schema.String)),
  error: Schema.optional(Schema.NullOr(ErrorObject))
}

const ChatResponse = Schema.Struct({
  id: Schema.optional(Schema.NullOr(Schema.String)),
  model: Schema.optional(Schema.NullOr(Schema.String)),
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ message: TextContent, ...choiceEnd })))),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
    completion_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
    cost: Schema.optional(Schema.NullOr(Schema.Number))
  }))),
  error: Schema.optional(Schema.NullOr(ErrorObject))
})

const ErrorBody = Schema.Struct({ error: ErrorObject })

const StreamChunk = Schema.Struct({
  model: ChatResponse.fields.model,
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ delta: TextContent, ...choiceEnd })))),
  usage: ChatResponse.fields.usage,
  error: ChatResponse.fields.error
})
const decodeStreamChunk = Schema.decodeUnknownEither(Schema.parseJson(StreamChunk))

const Price = Schema.Union(Schema.Number, Schema.NumberFromString)

const ModelsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    id: Schema.String,
    name: Schema.optional(Schema.NullOr(Schema.String)),
    context_length: Schema.optional(Schema.NullOr(Schema.Number)),
    pricing: Schema.optional(Schema.NullOr(Schema.Struct({
      prompt: Schema.optional(Schema.NullOr(Price)),
      completion: Schema.optional(Schema.NullOr(Price))
    })))
  }))
})

const decodeChat = Schema.decodeUnknownEither(Schema.parseJson(ChatResponse))
const decodeErrorBody = Schema.decodeUnknownOption(Schema.parseJson(ErrorBody))
const decodeModels = Schema.decodeUnknownEither(Schema.parseJson(ModelsResponse))

/** Retry-After is either delta-seconds or an HTTP date. */
export const parseRetryAfter = (value: string | undefined, now: number = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000))
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const snippet = (text: string, max = 200): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

const looksLikeHtml = (contentType: string | undefined, text: string): boolean =>
  (contentType ?? "").includes("text/html") || /^\s*<(!doctype|html|head|body)/i.test(text)

/** A numeric or textual error code that says "try again later". */
const isTransientCode = (code: number | string | null | undefined): boolean => {
  if (typeof code === "number") return isTransientStatus(code)
  if (typeof code === "string") {
    const n = Number(code)
    if (Number.isFinite(n)) return isTransientStatus(n)
    return /timeout|timed.?out|rate|overload|unavailable|server_error|internal|capacity|busy/i.test(code)
  }
  return false
}

/** Maps an HTTP error status (with its body) to the typed error a caller can act on. */
const errorForStatus = (
  model: string,
  status: number,
  headers: Readonly<Record<string, string | undefined>>,
  text: string
): ProviderError => {
  const body = decodeErrorBody(text)
  const providerMessage = Option.match(body, {
    onNone: () => (looksLikeHtml(headers["content-type"], text) ? "an HTML error page (a proxy or gateway answered)" : snippet(text) || "no body"),
    onSome: (b) => b.error.message ?? `error code ${String(b.error.code)}`
  })
  const message = `HTTP ${status}: ${providerMessage}`
  const retryAfterMs = parseRetryAfter(headers["retry-after"])
  if (status === 429) return new RateLimited({ model, message, httpStatus: status, retryAfterMs })
  if (status === 401) return new Unauthorized({ model, message: `${message} (check OPENROUTER_API_KEY)`, httpStatus: status })
  if (status === 402) return new OutOfCredits({ model, message: `${message} (add credits to the OpenRouter account)`, httpStatus: status })
  if (status === 403) return new Forbidden({ model, message, httpStatus: status })
  if (isTransientStatus(status)) return new ProviderFailure({ model, message, httpStatus: status, retryAfterMs })
  return new BadRequest({ model, message, httpStatus: status })
}

/** Turns a 2xx body into a Completion, or the precise reason it cannot be one. */
export const interpretChatBody = (
  model: string,
  status: number,
  contentType: string | undefined,
  text: string
): Completion | ProviderError => {
  const decoded = decodeChat(text)
  if (decoded._tag === "Left") {
    const message = looksLikeHtml(contentType, text)
      ? "an HTML page instead of JSON (a proxy or gateway answered)"
      : text.trim() === ""
      ? "an empty body"
      : `a body that is not a chat completion: ${snippet(ParseResult.TreeFormatter.formatErrorSync(decoded.left), 300)}`
    return new InvalidResponse({ model, message: `Invalid response: ${message}`, httpStatus: status })
  }
  const body = decoded.right
  if (body.error) {
    return new ErrorInBody({
      model,
      code: body.error.code ?? undefined,
      message: `Provider error in a ${status} body: ${body.error.message ?? "no message"}${body.error.code != null ? ` (code ${body.error.code})` : ""}`,
      transient: isTransientCode(body.error.code)
    })
  }
  const choice = body.choices?.[0]
  if (!choice) return new InvalidResponse({ model, message: "Invalid response: no choices", httpStatus: status })
  if (choice.error || choice.finish_reason === "error") {
    return new ErrorInBody({
      model,
      code: choice.error?.code ?? undefined,
      message: `Provider error in the answer: ${choice.error?.message ?? "finish_reason error"}`,
      transient: isTransientCode(choice.error?.code) || choice.error?.code == null
    })
  }
  const content = choice.message?.content
  if (content == null) return new InvalidResponse({ model, message: "Invalid response: content is null", httpStatus: status })
  if (content.trim() === "") return new InvalidResponse({ model, message: "Invalid response: content is empty", httpStatus: status })
  const cost = body.usage?.cost
  return {
    content,
    servedBy: body.model ?? model,
    usage: {
      promptTokens: body.usage?.prompt_tokens ?? 0,
      completionTokens: body.usage?.completion_tokens ?? 0,
      ...(cost != null ? { cost } : {})
    },
    finishReason: choice.finish_reason ?? undefined
  }
}

const isProviderError = (x: Completion | ProviderError): x is ProviderError => "_tag" in x

const transportError = (model: string, error: HttpClientError.HttpClientError): NetworkError =>
  error._tag === "RequestError"
    ? new NetworkError({ model, message: `Network error: ${describeCause(error.cause) ?? error.reason}` })
    : new NetworkError({ model, message: `Network error while reading the answer: ${describeCause(error.cause) ?? error.reason}` })

const describeCause = (cause: unknown): string | undefined => {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause
    const code = (cause as Error & { code?: unknown }).code
    const innerText = inner instanceof Error ? describeCause(inner) : undefined
    return [cause.message, typeof code === "string" ? code : undefined, innerText].filter(Boolean).join(": ")
  }
  return undefined
}

const headerRecord = (response: HttpClientResponse.HttpClientResponse): Record<string, string | undefined> =>
  response.headers as Record<string, string | undefined>

export interface OpenRouterClientShape {
  /** One attempt at a chat completion: retries and the time budget belong to the caller's policy. */
  readonly complete: (request: CompletionRequest) => Effect.Effect<Completion, ProviderError>
  /** The provider's model catalogue (`GET /models`). */
  readonly listModels: () => Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError>
}

/** The OpenRouter (or any OpenAI-compatible) chat API over one pooled HTTP client. */
export class OpenRouterClient extends Context.Tag("parallel-llm/OpenRouterClient")<
  OpenRouterClient,
  OpenRouterClientShape
>() {}

export const makeOpenRouterClient = Effect.gen(function*() {
  const settings = yield* Settings
  // No span and no traceparent header per request: nothing here exports traces, and the provider has
  // no use for ours (measured: ~80 µs of the ~1 ms of CPU a streamed call costs).
  const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const headers: Record<string, string> = {
    "HTTP-Referer": settings.appUrl,
    "X-Title": settings.appTitle,
    "Accept": "application/json"
  }
  // A provider or proxy may echo the key back (in an error, even in an answer): it must never reach a
  // log, an error message or a file, so every text from the wire is scrubbed of it before use.
  const keyText = Option.match(settings.apiKey, { onNone: () => undefined, onSome: (key) => Redacted.value(key) })
  const scrub = (text: string): string =>
    keyText !== undefined && keyText !== "" && text.includes(keyText) ? text.split(keyText).join("<redacted>") : text

  const withAuth = Option.match(settings.apiKey, {
    onNone: () => (request: HttpClientRequest.HttpClientRequest) => request,
    onSome: (key) => HttpClientRequest.bearerToken(Redacted.value(key))
  })

  /** The body's bytes up to the size cap: past it the stream is dropped, which closes the connection. */
  const cappedBody = (model: string, response: HttpClientResponse.HttpClientResponse) => {
    let size = 0
    return response.stream.pipe(
      Stream.mapError((e) => transportError(model, e)),
      Stream.mapEffect((bytes) => {
        size += bytes.length
        return size > settings.maxResponseBytes ? Effect.fail(tooLarge(model, undefined)) : Effect.succeed(bytes)
      }),
      Stream.decodeText()
    )
  }

  const tooLarge = (model: string, partial: string | undefined) =>
    new ResponseTooLarge({
      model,
      limitBytes: settings.maxResponseBytes,
      message: `Response larger than ${settings.maxResponseBytes.toLocaleString("en-US")} bytes (--max-response-bytes): connection closed`,
      ...(partial ? { partialContent: partial } : {})
    })

  /** Folds an SSE answer into a Completion; an error event or a broken stream keeps the text so far. */
  const readStream = (request: CompletionRequest, response: HttpClientResponse.HttpClientResponse) => {
    const model = request.model
    let content = ""
    let servedBy: string | undefined
    let finishReason: string | undefined
    let usage: Completion["usage"] | undefined
    const withPartial = (error: ProviderError): ProviderError =>
      content === "" || "partialContent" in error && error.partialContent !== undefined
        ? error
        : error._tag === "NetworkError"
        ? new NetworkError({ model, message: error.message, partialContent: content })
        : error._tag === "ResponseTooLarge"
        ? tooLarge(model, content)
        : error
    /** Folds one event into the answer; returns an effect only when there is something to run (a failure, a delta). */
    const onEvent = (event: Sse.Event): Effect.Effect<void, ProviderError> | undefined => {
      const data = scrub(event.data)
      const decoded = decodeStreamChunk(data)
      if (decoded._tag === "Left") {
        return Effect.fail(new InvalidResponse({ model, message: `Invalid stream chunk: ${snippet(data)}`, httpStatus: response.status }))
      }
      const chunk = decoded.right
      const choice = chunk.choices?.[0]
      const error = chunk.error ?? choice?.error
      if (error || choice?.finish_reason === "error") {
        return Effect.fail(new ErrorInBody({
          model,
          code: error?.code ?? undefined,
          message: `Provider error mid-stream: ${error?.message ?? "finish_reason error"}${error?.code != null ? ` (code ${error.code})` : ""}`,
          transient: error?.code == null || isTransientCode(error.code),
          ...(content !== "" ? { partialContent: content } : {})
        }))
      }
      if (chunk.model) servedBy = chunk.model
      if (choice?.finish_reason) finishReason = choice.finish_reason
      if (chunk.usage) {
        usage = {
          promptTokens: chunk.usage.prompt_tokens ?? 0,
          completionTokens: chunk.usage.completion_tokens ?? 0,
          ...(chunk.usage.cost != null ? { cost: chunk.usage.cost } : {})
        }
      }
      const delta = choice?.delta?.content
      if (!delta) return undefined
      content += delta
      return request.onDelta ? request.onDelta(delta) : undefined
    }
    // One pass per network chunk: byte cap, SSE decoding and the events, all synchronous (see sseEvents.ts).
    // After `[DONE]` the rest of the body (normally nothing but its end) is still read, so that the
    // connection goes back to the pool instead of being torn down and opened again for the next call.
    const decoder = makeSseDecoder({ maxEventChars: settings.maxResponseBytes })
    let size = 0
    let done = false
    const onEvents = (
      doneSignal: Deferred.Deferred<void>,
      events: ReadonlyArray<Sse.Event> | undefined
    ): Effect.Effect<void, ProviderError> => {
      if (events === undefined) return Effect.fail(tooLarge(model, undefined))
      const from = (start: number): Effect.Effect<void, ProviderError> => {
        for (let i = start; i < events.length && !done; i++) {
          if (events[i]!.data.trim() === "[DONE]") {
            done = true
            return Deferred.succeed(doneSignal, undefined)
          }
          const effect = onEvent(events[i]!)
          // A listener with nothing to do returns Effect.void: no need to run it, event after event.
          if (effect !== undefined && effect !== Effect.void) return Effect.flatMap(effect, () => from(i + 1))
        }
        return Effect.void
      }
      return from(0)
    }
    const onBytes = (doneSignal: Deferred.Deferred<void>) => (chunk: Chunk.Chunk<Uint8Array>): Effect.Effect<void, ProviderError> => {
      const pieces = Chunk.toReadonlyArray(chunk)
      if (done) return Effect.void
      const events: Array<Sse.Event> = []
      for (const bytes of pieces) {
        size += bytes.length
        if (size > settings.maxResponseBytes) return Effect.zipRight(onEvents(doneSignal, events), Effect.fail(tooLarge(model, undefined)))
        const more = decoder.push(bytes)
        if (more === undefined) return Effect.zipRight(onEvents(doneSignal, events), onEvents(doneSignal, undefined))
        for (const event of more) events.push(event)
      }
      return onEvents(doneSignal, events)
    }
    return Deferred.make<void>().pipe(
      Effect.flatMap((doneSignal) =>
        response.stream.pipe(
          Stream.runForEachChunk(onBytes(doneSignal)),
          // Mapped once here rather than by a stage that every chunk goes through.
          Effect.catchTag("ResponseError", (e) => Effect.fail(transportError(model, e))),
          Effect.zipRight(Effect.suspend(() => (done ? Effect.void : onEvents(doneSignal, decoder.end())))),
          // A server that keeps the response open after `[DONE]` gets a moment to end it, no more.
          Effect.raceFirst(Deferred.await(doneSignal).pipe(Effect.zipRight(Effect.sleep(DRAIN_AFTER_DONE))))
        )
      ),
      Effect.mapError(withPartial),
      Effect.flatMap((): Effect.Effect<Completion, ProviderError> => {
        if (content.trim() === "") {
          return Effect.fail(new InvalidResponse({ model, message: "Invalid response: the stream carried no content", httpStatus: response.status }))
        }
        return Effect.succeed({
          content,
          servedBy: servedBy ?? model,
          usage: usage ?? { promptTokens: 0, completionTokens: 0 },
          finishReason
        })
      })
    )
  }

  const complete = Effect.fn("OpenRouterClient.complete")(function*(request: CompletionRequest) {
    const body = {
      model: request.model,
      messages: request.messages,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      stream: settings.stream
    }
    const httpRequest = HttpClientRequest.post(`${settings.baseUrl}/chat/completions`).pipe(
      HttpClientRequest.setHeaders(settings.stream ? { ...headers, Accept: "text/event-stream" } : headers),
      withAuth,
      HttpClientRequest.bodyUnsafeJson(body)
    )
    const response = yield* http.execute(httpRequest).pipe(
      Effect.mapError((e) => transportError(request.model, e))
    )
    const responseHeaders = headerRecord(response)
    const contentType = responseHeaders["content-type"]
    if (response.status >= 200 && response.status < 300 && (contentType ?? "").includes("text/event-stream")) {
      return yield* readStream(request, response)
    }
    // Errors, and servers that answer a streamed request with one JSON body, come here.
    const text = scrub(yield* Stream.mkString(cappedBody(request.model, response)))
    if (response.status < 200 || response.status >= 300) {
      return yield* Effect.fail(errorForStatus(request.model, response.status, responseHeaders, text))
    }
    const result = interpretChatBody(request.model, response.status, contentType, text)
    return isProviderError(result) ? yield* Effect.fail(result) : result
  })

  const listModels = Effect.fn("OpenRouterClient.listModels")(function*() {
    const request = HttpClientRequest.get(`${settings.baseUrl}/models`).pipe(HttpClientRequest.setHeaders(headers), withAuth)
    const response = yield* http.execute(request).pipe(Effect.mapError((e) => transportError("(models)", e)))
    const text = scrub(yield* Stream.mkString(cappedBody("(models)", response)))
    if (response.status < 200 || response.status >= 300) {
      return yield* Effect.fail(errorForStatus("(models)", response.status, headerRecord(response), text))
    }
    const decoded = decodeModels(text)
    if (decoded._tag === "Left") {
      return yield* new InvalidResponse({
        model: "(models)",
        message: `Invalid /models response: ${snippet(ParseResult.TreeFormatter.formatErrorSync(decoded.left), 300)}`,
        httpStatus: response.status
      })
    }
    const perMillion = (p: number | null | undefined) => (p == null ? undefined : p * 1_000_000)
    return decoded.right.data.map((m): ModelInfo => ({
      id: m.id,
      name: m.name ?? undefined,
      contextLength: m.context_length ?? undefined,
      promptPrice: perMillion(m.pricing?.prompt),
      completionPrice: perMillion(m.pricing?.completion)
    }))
  })

  return OpenRouterClient.of({ complete, listModels: () => listModels() })
})

/** The real client; needs Settings and one HttpClient (the pooled undici client in production). */
export const layerOpenRouterClient: Layer.Layer<OpenRouterClient, never, Settings | HttpClient.HttpClient> = Layer.effect(
  OpenRouterClient,
  makeOpenRouterClient
)
