import { Clock, Duration, Effect, Layer, Option, type Stream } from "effect"
import { httpStatusOf, type ProviderError } from "../domain/errors.js"
import type { ModelInfo, ModelPart, ModelProvider, ModelRequest } from "../domain/modelCall.js"
import { cliAgents, routed } from "./providers/cliAgent/provider.js"
import { openAiCompatible } from "./providers/openaiCompatible/client.js"

const CATALOGUE_TTL = Duration.hours(1)
/** The statuses by which a server says it has no `GET /models` at all, rather than that it failed this time. */
const NO_CATALOGUE: ReadonlySet<number> = new Set([404, 405])

/**
 * A provider with the catalogue every run decides from (structured output or not, who reads images):
 * fetched once, kept an hour; a failure is not kept, so the next run asks again, except a server saying it has
 * none (404, 405: many local servers), which is kept as long: asked again on every run, it cost each run one
 * more HTTP request than its calls (bench/README.md).
 */
const withCatalogue = Effect.fnUntraced(function*(provider: ModelProvider) {
  let fetchedAt = Number.NEGATIVE_INFINITY
  let kept: ReadonlyArray<ModelInfo> | undefined
  const [cachedCatalogue, forgetCatalogue] = yield* Effect.cachedInvalidateWithTTL(
    Effect.tap(provider.listModels(), (models) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        fetchedAt = now
        kept = models
      })),
    CATALOGUE_TTL
  )
  const catalogue: Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError> = cachedCatalogue.pipe(
    Effect.tapError((e) => (NO_CATALOGUE.has(httpStatusOf(e) ?? 0) ? Effect.void : forgetCatalogue))
  )
  return {
    /** One attempt at a call, as a stream of parts: retries and the time budget belong to the caller (`callModel`). */
    stream: (request: ModelRequest): Stream.Stream<ModelPart, ProviderError> => provider.stream(request),
    /** The provider's model catalogue, fetched now. */
    listModels: (): Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError> => provider.listModels(),
    /** The model catalogue as `listModels` gives it, kept for an hour: for what each run decides from it. */
    catalogue,
    /** The kept catalogue if it was fetched less than `age` ago, else fetched again (and kept): before a refusal. */
    catalogueNewerThan: (age: Duration.DurationInput) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) => (now - fetchedAt > Duration.toMillis(age) ? Effect.zipRight(forgetCatalogue, catalogue) : catalogue)
      ),
    /** The catalogue kept now, if any: no fetch, no wait. */
    keptCatalogue: Effect.map(
      Clock.currentTimeMillis,
      (now) => (kept !== undefined && now - fetchedAt < Duration.toMillis(CATALOGUE_TTL) ? Option.some(kept) : Option.none())
    )
  }
})

/**
 * The models, whoever serves them: a call is a `Stream` of parts that the caller folds once
 * (src/programs/answerFold.ts). `Default` is the OpenAI-compatible HTTP provider (OpenRouter, vLLM,
 * Ollama…; it needs Settings and an HttpClient), with the CLI agents' ids routed to their CLIs (docs/cli-agents.md); `ModelClient.provider` makes the layer of another
 * (docs/extending.md), `ModelClient.Test` the layer of a test double.
 */
export class ModelClient extends Effect.Service<ModelClient>()("parallel-llm/ModelClient", {
  // CLI-agent ids (`claude-code/…`, `codex/…`, `gemini-cli/…`) to their CLIs, every other id to the HTTP provider.
  effect: Effect.flatMap(Effect.zipWith(openAiCompatible, cliAgents, routed), withCatalogue)
}) {
  /** The client over a provider that `make` builds. */
  static readonly provider = <E, R>(make: Effect.Effect<ModelProvider, E, R>): Layer.Layer<ModelClient, E, R> =>
    Layer.effect(ModelClient, Effect.map(Effect.flatMap(make, withCatalogue), (client) => ModelClient.make(client)))

  /** The client over a test double of a provider. */
  static readonly Test = (provider: ModelProvider): Layer.Layer<ModelClient> => ModelClient.provider(Effect.succeed(provider))
}
