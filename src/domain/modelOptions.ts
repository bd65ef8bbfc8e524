import { Schema } from "effect"
import { ModelId } from "./model.js"

// What one model may be asked with besides the prompt: the per-model options of the config file, the run's
// reasoning effort and web search. The manifest records them per call as they were sent.

/** A literal union's own message, over its members' ("expected "high", actual …" says too little). */
const oneOf = (...values: ReadonlyArray<string>) => ({
  message: `expected ${values.map((v) => JSON.stringify(v)).join(", ")}`,
  override: true
})

export const ReasoningEffort = Schema.Literal("low", "medium", "high").annotations({
  message: () => oneOf("low", "medium", "high")
})
export type ReasoningEffort = typeof ReasoningEffort.Type

/** OpenRouter's provider routing for one model (sent as `provider: { sort, order, allow_fallbacks }`). */
export const ProviderRouting = Schema.Struct({
  sort: Schema.optional(
    Schema.Literal("price", "throughput", "latency").annotations({ message: () => oneOf("price", "throughput", "latency") })
  ),
  order: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString.annotations({ message: () => "expected provider names" }))),
  allowFallbacks: Schema.optional(Schema.Boolean.annotations({ message: () => "expected true or false" }))
})
export type ProviderRouting = typeof ProviderRouting.Type

/** The options a model object of the config file may carry; each one left out uses the run's setting. */
export const ModelOptions = Schema.Struct({
  temperature: Schema.optional(
    Schema.Number.pipe(Schema.between(0, 2)).annotations({ message: () => "expected a number from 0 to 2" })
  ),
  maxTokens: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 10_000_000)).annotations({
      message: () => "expected a whole number from 1 to 10000000"
    })
  ),
  reasoning: Schema.optional(Schema.Struct({ effort: ReasoningEffort })),
  provider: Schema.optional(ProviderRouting),
  /** Models OpenRouter tries in order when this one fails (its `models` list). */
  fallbacks: Schema.optional(Schema.Array(ModelId))
})
export type ModelOptions = typeof ModelOptions.Type

/** A model object of the config file: an id with its options. */
export const ModelSpec = Schema.Struct({ id: ModelId, ...ModelOptions.fields })
export type ModelSpec = typeof ModelSpec.Type

/** Web search's limits a call was sent with (only those set: the rest was the provider's default). */
export const WebSearchLimits = Schema.Struct({
  engine: Schema.optional(Schema.String),
  maxResults: Schema.optional(Schema.Number),
  maxUses: Schema.optional(Schema.Number),
  allowedDomains: Schema.optional(Schema.Array(Schema.String)),
  excludedDomains: Schema.optional(Schema.Array(Schema.String))
})

/**
 * What one call was sent, as its manifest record keeps it: the effective options, whether it searched the web,
 * and with which limits when any was set.
 */
export const SentOptions = Schema.Struct({
  ...ModelOptions.fields,
  web: Schema.optional(Schema.Boolean),
  webSearch: Schema.optional(WebSearchLimits)
})
export type SentOptions = typeof SentOptions.Type

/** A web page a model cited (OpenRouter's `url_citation` annotation), its text cleaned. */
export const Citation = Schema.Struct({
  url: Schema.String,
  title: Schema.optional(Schema.String),
  /** The part of the page the model was given, shortened. */
  content: Schema.optional(Schema.String),
  /** Where in the answer the citation applies. */
  startIndex: Schema.optional(Schema.Number),
  endIndex: Schema.optional(Schema.Number)
})
export type Citation = typeof Citation.Type
