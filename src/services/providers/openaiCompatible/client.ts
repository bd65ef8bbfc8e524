import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import { Channel, Effect, Either, Stream } from "effect"
import { InvalidResponse, type ProviderError } from "../../../domain/errors.js"
import type { ModelInfo, ModelPart, ModelProvider, ModelRequest } from "../../../domain/modelCall.js"
import { makeRedact, makeStreamRedact, type Redact } from "../../../domain/redact.js"
import { Settings } from "../../settings.js"
import { bodyEnded, bodyTakenOver, byteCap, transportError, undiciBody } from "./body.js"
import { readableReads } from "./readable.js"
import { providerRequests, type WebForm } from "./request.js"
import { billedUsageOf, cacheOutcomeOf, errorForStatus, interpretChatBody, isVariable, perMillion } from "./response.js"
import { bodyParts, partsOfCompletion, sseParts, type StreamContext } from "./stream.js"
import { decodeModels } from "./wire.js"

/** A 400 whose error speaks of tools: the server does not take web search's tool (see `opened`). */
const REFUSES_TOOLS = /\btools?\b/i

type Headers = Readonly<Record<string, string | undefined>>
const headerRecord = (response: HttpClientResponse.HttpClientResponse): Headers => response.headers

/** What every request of the provider reads: built once per client by {@link openAiCompatible}. */
interface Provider {
  readonly http: HttpClient.HttpClient
  readonly requests: ReturnType<typeof providerRequests>
  readonly stream: boolean
  readonly redact: Redact
  readonly contextFor: (model: string, status: number, headers?: Headers) => StreamContext
}

/** The whole body as text, up to the size cap. */
const bodyText = (p: Provider, model: string, response: HttpClientResponse.HttpClientResponse) =>
  Effect.suspend(() => {
    const cap = byteCap(p.contextFor(model, response.status))
    return response.stream.pipe(
      Stream.mapError((e): ProviderError => transportError(model, e)),
      Stream.mapEffect((bytes) => {
        const failure = cap(bytes)
        return failure === undefined ? Effect.succeed(bytes) : Effect.fail(failure)
      }),
      Stream.decodeText(),
      Stream.mkString
    )
  })

/** A status outside 2xx, typed by its status and body. */
const statusError = (p: Provider, model: string, response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ProviderError> =>
  Effect.flatMap(
    bodyText(p, model, response),
    (text) => Effect.fail(errorForStatus(model, response.status, headerRecord(response), text, p.redact))
  )

/**
 * A streamed answer's parts: the splitter reads undici's body itself when the response is undici's (see
 * readable.ts), else the platform's stream is piped into it. A failed read is the platform's `ResponseError` either way.
 */
const streamedParts = (
  response: HttpClientResponse.HttpClientResponse,
  context: StreamContext
): Stream.Stream<ModelPart, ProviderError> => {
  const body = undiciBody(response)
  if (body === undefined) return Stream.pipeThroughChannel(response.stream, sseParts(context))
  const onError = (cause: unknown) => new HttpClientError.ResponseError({ request: response.request, response, reason: "Decode", cause })
  return Stream.fromChannel(Channel.suspend(() => {
    bodyTakenOver(response)
    return bodyParts({ ...context, bodyEnded: bodyEnded(body) }, readableReads(body, onError))
  }))
}

/** A 2xx chat answer: a token stream, or one JSON body (also from servers that ignore `stream`). */
const chatAnswer =
  (p: Provider, model: string) => (response: HttpClientResponse.HttpClientResponse): Stream.Stream<ModelPart, ProviderError> => {
    const contentType = response.headers["content-type"]
    const context = p.contextFor(model, response.status, headerRecord(response))
    if ((contentType ?? "").includes("text/event-stream")) {
      return streamedParts(response, context)
    }
    return Stream.unwrap(
      Effect.map(
        bodyText(p, model, response),
        (text) =>
          Either.match(interpretChatBody(model, response.status, contentType, text, p.redact, context.cache), {
            onRight: (completion) => Stream.fromChunk(partsOfCompletion(completion)),
            // A body that is no answer may still report the tokens it was billed: they go before the failure.
            onLeft: (error) => {
              const usage = billedUsageOf(text)
              const billed = usage === undefined ? Stream.empty : Stream.succeed<ModelPart>({ _tag: "Usage", usage })
              return Stream.concat(billed, Stream.fail(error))
            }
          })
      )
    )
  }

const send = (p: Provider, request: ModelRequest, webForm: WebForm) =>
  p.http.execute(p.requests.chat(request, p.stream, webForm)).pipe(Effect.mapError((e) => transportError(request.model, e)))

/**
 * The response to a call. A server other than OpenRouter that refuses web search's tool with a 400 naming
 * it (a gateway that checks `tools` against OpenAI's schema) is asked once more with the `web` plugin instead.
 */
const opened = (p: Provider, request: ModelRequest): Effect.Effect<HttpClientResponse.HttpClientResponse, ProviderError> =>
  request.web === undefined || p.requests.openRouter
    ? send(p, request, "tool")
    : Effect.flatMap(send(p, request, "tool"), (response) =>
      response.status !== 400
        ? Effect.succeed(response)
        : Effect.flatMap(bodyText(p, request.model, response), (text) =>
          REFUSES_TOOLS.test(text)
            ? send(p, request, "plugin")
            : Effect.fail(errorForStatus(request.model, response.status, headerRecord(response), text, p.redact))))

// The response's stream is run as a channel of its own (`Channel.unwrap`), not flattened into another
// stream: `Stream.unwrap` would pass every read through a concatenation of streams.
const chatStream = (p: Provider, request: ModelRequest): Stream.Stream<ModelPart, ProviderError> =>
  Stream.fromChannel(Channel.unwrap(Effect.matchEffect(opened(p, request), {
    onFailure: Effect.fail,
    onSuccess: (response) =>
      Effect.succeed(Stream.toChannel(HttpClientResponse.matchStatus(response, {
        "2xx": chatAnswer(p, request.model),
        orElse: (failed) => Stream.fromEffect(statusError(p, request.model, failed))
      })))
  })))

/** `GET /models`, decoded: a body of another shape is an InvalidResponse naming where. */
const listModels = Effect.fnUntraced(function*(p: Provider) {
  const model = "(models)"
  const response = yield* p.http.execute(p.requests.models).pipe(Effect.mapError((e) => transportError(model, e)))
  const text = yield* HttpClientResponse.matchStatus(response, {
    "2xx": (ok) => bodyText(p, model, ok),
    orElse: (failed) => statusError(p, model, failed)
  })
  const decoded = decodeModels(text)
  if (Either.isLeft(decoded)) {
    const why = decoded.left._tag === "NotJson" ? "not JSON" : `wrong shape at ${decoded.left.path}`
    return yield* new InvalidResponse({ model, message: `Invalid /models response: ${why}`, httpStatus: response.status })
  }
  return decoded.right.data.map((m): ModelInfo => ({
    id: m.id,
    name: m.name ?? undefined,
    contextLength: m.context_length ?? undefined,
    promptPrice: perMillion(m.pricing?.prompt),
    completionPrice: perMillion(m.pricing?.completion),
    ...(isVariable(m.pricing?.prompt) || isVariable(m.pricing?.completion) ? { variablePrice: true } : {}),
    inputModalities: m.architecture?.input_modalities ?? undefined,
    supportedParameters: m.supported_parameters ?? undefined,
    ...(m.alias_target != null ? { resolvesTo: m.alias_target.slug } : {})
  }))
})

/**
 * The OpenAI-compatible chat API (OpenRouter, or vLLM, Ollama, llama.cpp… at `baseUrl`) over the process's
 * one HTTP client, as a {@link ModelProvider}. OpenRouter's extras (provider routing, fallback `models`,
 * web search, the response cache, the `HTTP-Referer`/`X-Title` attribution) are sent when the request or
 * the settings have them.
 */
export const openAiCompatible: Effect.Effect<ModelProvider, never, Settings | HttpClient.HttpClient> = Effect.gen(function*() {
  const settings = yield* Settings
  // A provider or proxy may echo the key back (in an error, even in an answer): every string taken from
  // a parsed body is scrubbed of it before it reaches a log, an error message or a file.
  const redact = makeRedact(settings.apiKey)
  const streamRedact = () => makeStreamRedact(settings.apiKey)
  const provider: Provider = {
    // The process's one client (httpClientPool.ts), whose requests make no span.
    http: yield* HttpClient.HttpClient,
    requests: providerRequests(settings),
    stream: settings.stream,
    redact,
    contextFor: (model, status, headers = {}) => ({
      model,
      status,
      maxBytes: settings.maxResponseBytes,
      redact,
      streamRedact,
      cache: settings.cacheTtl > 0 ? cacheOutcomeOf(headers) : undefined
    })
  }
  return {
    stream: (request) => chatStream(provider, request),
    listModels: () => listModels(provider)
  } satisfies ModelProvider
})
