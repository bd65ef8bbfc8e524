import { HttpClient, HttpClientResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, Option, Stream } from "effect"
import { httpStatusOf, InvalidResponse, type ProviderError } from "../../domain/errors.js"
import { Settings } from "../Settings.js"
import { byteCap, transportError } from "./body.js"
import { makeRedact } from "./redact.js"
import { type CompletionRequest, providerHttpClient, providerRequests } from "./request.js"
import { type Completion, errorForStatus, interpretChatBody, isVariable, type ModelInfo, perMillion } from "./response.js"
import { readStreamedAnswer } from "./stream.js"
import { decodeModels } from "./wire.js"

const CATALOGUE_TTL = Duration.hours(1)
/** The statuses by which a server says it has no `GET /models` at all, rather than that it failed this time. */
const NO_CATALOGUE: ReadonlySet<number> = new Set([404, 405])

const headerRecord = (response: HttpClientResponse.HttpClientResponse): Readonly<Record<string, string | undefined>> => response.headers

const make = Effect.gen(function*() {
  const settings = yield* Settings
  const http = providerHttpClient(yield* HttpClient.HttpClient)
  const requests = providerRequests(settings)
  // A provider or proxy may echo the key back (in an error, even in an answer): every string taken from
  // a parsed body is scrubbed of it before it reaches a log, an error message or a file.
  const redact = makeRedact(settings.apiKey)
  const contextFor = (model: string, status: number) => ({ model, status, maxBytes: settings.maxResponseBytes, redact })

  /** The whole body as text, up to the size cap. */
  const bodyText = (model: string, response: HttpClientResponse.HttpClientResponse) =>
    Effect.suspend(() => {
      const cap = byteCap(contextFor(model, response.status))
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
  const statusError = (model: string, response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ProviderError> =>
    Effect.flatMap(
      bodyText(model, response),
      (text) => Effect.fail(errorForStatus(model, response.status, headerRecord(response), text, redact))
    )

  /** A 2xx chat answer: a token stream, or one JSON body (also from servers that ignore `stream`). */
  const chatAnswer =
    (request: CompletionRequest) => (response: HttpClientResponse.HttpClientResponse): Effect.Effect<Completion, ProviderError> => {
      const contentType = response.headers["content-type"]
      if ((contentType ?? "").includes("text/event-stream")) {
        return readStreamedAnswer(contextFor(request.model, response.status), response.stream, request.onDelta)
      }
      // An Either is an Effect: its Left is the failure.
      return Effect.flatMap(
        bodyText(request.model, response),
        (text) => interpretChatBody(request.model, response.status, contentType, text, redact)
      )
    }

  const complete = (request: CompletionRequest): Effect.Effect<Completion, ProviderError> =>
    Effect.matchEffect(http.execute(requests.chat(request, settings.stream)), {
      onFailure: (e) => Effect.fail(transportError(request.model, e)),
      onSuccess: HttpClientResponse.matchStatus({
        "2xx": chatAnswer(request),
        orElse: (response) => statusError(request.model, response)
      })
    })

  const listModels = Effect.fnUntraced(function*() {
    const model = "(models)"
    const response = yield* http.execute(requests.models).pipe(Effect.mapError((e) => transportError(model, e)))
    const text = yield* HttpClientResponse.matchStatus(response, {
      "2xx": (ok) => bodyText(model, ok),
      orElse: (failed) => statusError(model, failed)
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
      supportedParameters: m.supported_parameters ?? undefined
    }))
  })

  // The catalogue for decisions made per run (structured output or not): fetched once, kept a while; a
  // failure is not kept, so the next run asks again (except a server saying it has none: NO_CATALOGUE).
  let fetchedAt = Number.NEGATIVE_INFINITY
  let kept: ReadonlyArray<ModelInfo> | undefined
  const [cachedCatalogue, forgetCatalogue] = yield* Effect.cachedInvalidateWithTTL(
    Effect.tap(listModels(), (models) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        fetchedAt = now
        kept = models
      })),
    CATALOGUE_TTL
  )
  const keptCatalogue = Effect.map(
    Clock.currentTimeMillis,
    (now) => (kept !== undefined && now - fetchedAt < Duration.toMillis(CATALOGUE_TTL) ? Option.some(kept) : Option.none())
  )
  // A server that has no catalogue (404, 405: many local servers) keeps that answer as long as a catalogue is
  // kept; asked again on every run, it cost each run one more HTTP request than its calls (bench/README.md).
  const catalogue: Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError> = cachedCatalogue.pipe(
    Effect.tapError((e) => (NO_CATALOGUE.has(httpStatusOf(e) ?? 0) ? Effect.void : forgetCatalogue))
  )
  const catalogueNewerThan = (age: Duration.DurationInput) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => (now - fetchedAt > Duration.toMillis(age) ? Effect.zipRight(forgetCatalogue, catalogue) : catalogue)
    )

  return {
    /** One attempt at a chat completion: retries and the time budget belong to the caller's policy. */
    complete,
    /** The provider's model catalogue (`GET /models`). */
    listModels: (): Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError> => listModels(),
    /** The model catalogue as `listModels` gives it, kept for an hour: for what each run decides from it. */
    catalogue,
    /** The kept catalogue if it was fetched less than `age` ago, else fetched again (and kept): before a refusal. */
    catalogueNewerThan,
    /** The catalogue kept now, if any: no fetch, no wait. */
    keptCatalogue
  }
})

/**
 * The OpenRouter (or any OpenAI-compatible) chat API over the process's one HTTP client. `Default`
 * needs Settings and an HttpClient (the pooled undici client in production); tests provide their own
 * double with `OpenRouterClient.make` (see test/support/scriptedClient.ts).
 */
export class OpenRouterClient extends Effect.Service<OpenRouterClient>()("parallel-llm/OpenRouterClient", { effect: make }) {}

export type OpenRouterClientShape = Pick<OpenRouterClient, "complete" | "listModels">

/** Builds the client from Settings and an HttpClient in the current context. */
export const makeOpenRouterClient: Effect.Effect<OpenRouterClient, never, Settings | HttpClient.HttpClient> = Effect.map(
  make,
  OpenRouterClient.make
)

export const layerOpenRouterClient = OpenRouterClient.Default
