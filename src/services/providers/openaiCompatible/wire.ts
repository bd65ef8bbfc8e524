import { Either, ParseResult, Schema } from "effect"

// The provider's wire formats, decoded rather than trusted. Each decoder is compiled once and reads
// JSON that was parsed once.

export const ErrorObject = Schema.Struct({
  code: Schema.optional(Schema.Union(Schema.Number, Schema.String, Schema.Null)),
  message: Schema.optional(Schema.NullOr(Schema.String)),
  metadata: Schema.optional(Schema.Unknown)
})
export type ErrorObject = typeof ErrorObject.Type

/** A message (whole answers) or a delta (streamed pieces): both carry optional, nullable text (and web citations). */
const TextContent = Schema.optional(Schema.NullOr(Schema.Struct({
  content: Schema.optional(Schema.NullOr(Schema.String)),
  /** The model's reasoning, where the server streams it (OpenRouter's `reasoning`). */
  reasoning: Schema.optional(Schema.NullOr(Schema.String)),
  /**
   * Read apart, each against `UrlCitation`: an annotation of another kind, or a malformed list, is passed
   * over rather than failing the answer it came with.
   */
  annotations: Schema.optional(Schema.Unknown)
})))

/** A web page the answer cites (OpenRouter's web plugin; OpenAI's annotation shape). */
export const UrlCitation = Schema.Struct({
  type: Schema.Literal("url_citation"),
  url_citation: Schema.Struct({
    url: Schema.String,
    title: Schema.optional(Schema.NullOr(Schema.String)),
    content: Schema.optional(Schema.NullOr(Schema.String)),
    start_index: Schema.optional(Schema.NullOr(Schema.Number)),
    end_index: Schema.optional(Schema.NullOr(Schema.Number))
  })
})
export type UrlCitation = typeof UrlCitation.Type

const choiceEnd = {
  finish_reason: Schema.optional(Schema.NullOr(Schema.String)),
  error: Schema.optional(Schema.NullOr(ErrorObject))
}

const UsageObject = Schema.Struct({
  prompt_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  completion_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cost: Schema.optional(Schema.NullOr(Schema.Number)),
  completion_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({
    reasoning_tokens: Schema.optional(Schema.NullOr(Schema.Number))
  }))),
  prompt_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({
    cached_tokens: Schema.optional(Schema.NullOr(Schema.Number))
  }))),
  /** What the upstream provider charged (OpenRouter; BYOK keys are billed there). */
  cost_details: Schema.optional(Schema.NullOr(Schema.Struct({
    upstream_inference_cost: Schema.optional(Schema.NullOr(Schema.Number)),
    upstream_inference_prompt_cost: Schema.optional(Schema.NullOr(Schema.Number)),
    upstream_inference_completions_cost: Schema.optional(Schema.NullOr(Schema.Number))
  })))
})
export type WireUsage = typeof UsageObject.Type
const Usage = Schema.optional(Schema.NullOr(UsageObject))

const ChatResponse = Schema.Struct({
  id: Schema.optional(Schema.NullOr(Schema.String)),
  model: Schema.optional(Schema.NullOr(Schema.String)),
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ message: TextContent, ...choiceEnd })))),
  usage: Usage,
  error: Schema.optional(Schema.NullOr(ErrorObject))
})
export type ChatResponse = typeof ChatResponse.Type

const ErrorBody = Schema.Struct({ error: ErrorObject })

const StreamChunk = Schema.Struct({
  model: ChatResponse.fields.model,
  choices: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({ delta: TextContent, ...choiceEnd })))),
  usage: Usage,
  error: ChatResponse.fields.error
})
export type StreamChunk = typeof StreamChunk.Type

/** A price as listed: a number, or text (read by `perMillion` in client.ts, where what is not a price counts as none). */
const Price = Schema.Union(Schema.Number, Schema.String)

const ModelsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    id: Schema.String,
    name: Schema.optional(Schema.NullOr(Schema.String)),
    context_length: Schema.optional(Schema.NullOr(Schema.Number)),
    architecture: Schema.optional(Schema.NullOr(Schema.Struct({
      input_modalities: Schema.optional(Schema.NullOr(Schema.Array(Schema.String)))
    }))),
    pricing: Schema.optional(Schema.NullOr(Schema.Struct({
      prompt: Schema.optional(Schema.NullOr(Price)),
      completion: Schema.optional(Schema.NullOr(Price))
    }))),
    supported_parameters: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
    /** A `~vendor/family-latest` row: the concrete model it resolves to now (OpenRouter). */
    alias_target: Schema.optional(Schema.NullOr(Schema.Struct({ slug: Schema.String })))
  }))
})
export type ModelsResponse = typeof ModelsResponse.Type

/** Why a body could not be read: not JSON at all, or JSON of the wrong shape (at `path`). */
export type Undecodable = { readonly _tag: "NotJson" } | { readonly _tag: "WrongShape"; readonly path: string }

const notJson: Undecodable = { _tag: "NotJson" }

/** The first issue's place in the body, e.g. `choices.0.message`: short, and never a dump of the schema's type. */
const wrongShape = (error: ParseResult.ParseError): Undecodable => {
  const path = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.path.join(".") ?? ""
  return { _tag: "WrongShape", path: path === "" ? "(top level)" : path }
}

const parseJson = (text: string): Either.Either<unknown, Undecodable> =>
  Either.try({ try: () => JSON.parse(text) as unknown, catch: () => notJson })

const decoderOf = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (json: unknown): Either.Either<A, Undecodable> => Either.mapLeft(decode(json), wrongShape)
}

const decodeChatJson = decoderOf(ChatResponse)
const decodeErrorJson = decoderOf(ErrorBody)
const decodeModelsJson = decoderOf(ModelsResponse)
const decodeChunkJson = decoderOf(StreamChunk)

export const decodeChat = (text: string) => Either.flatMap(parseJson(text), decodeChatJson)
export const decodeErrorBody = (text: string) => Either.flatMap(parseJson(text), decodeErrorJson)
export const decodeModels = (text: string) => Either.flatMap(parseJson(text), decodeModelsJson)

type Json = Readonly<Record<string, unknown>>
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** The fields an everyday chunk may have; a chunk with any other (even null) goes through the Schema. */
const EVERYDAY_TOP = new Set(["id", "object", "created", "model", "provider", "system_fingerprint", "choices"])
const EVERYDAY_CHOICE = new Set(["index", "delta", "finish_reason", "native_finish_reason", "logprobs"])
const EVERYDAY_DELTA = new Set(["role", "content", "reasoning"])

const onlyKnown = (json: Json, known: ReadonlySet<string>) => {
  for (const key in json) if (!known.has(key)) return false
  return true
}

const isTextOrNone = (value: unknown) => value === undefined || value === null || typeof value === "string"

/**
 * The everyday chunk: one choice whose delta carries text, reasoning or neither, perhaps with its finish reason (the
 * last chunk of most answers), no usage, no error, and no field beyond those (annotations, tool calls, usage
 * details… go through the Schema). Checked by hand on the fields the answer reads, which the Schema would accept
 * as they are.
 */
const isEverydayChunk = (json: unknown): json is StreamChunk => {
  if (!isObject(json) || !onlyKnown(json, EVERYDAY_TOP)) return false
  const model = json.model
  if (!(model === undefined || model === null || typeof model === "string")) return false
  const choices = json.choices
  if (!Array.isArray(choices) || choices.length !== 1) return false
  const choice: unknown = choices[0]
  return isObject(choice) && onlyKnown(choice, EVERYDAY_CHOICE) && isTextOrNone(choice.finish_reason) &&
    isObject(choice.delta) && onlyKnown(choice.delta, EVERYDAY_DELTA) && isTextOrNone(choice.delta.content) &&
    isTextOrNone(choice.delta.reasoning)
}

/** One SSE chunk through the Schema alone (what the fast path must agree with). */
export const decodeStreamChunkBySchema = (text: string) => Either.flatMap(parseJson(text), decodeChunkJson)

/** One SSE chunk: the everyday delta chunk by the check above, everything else through the Schema. */
export const decodeStreamChunk = (text: string): Either.Either<StreamChunk, Undecodable> =>
  Either.flatMap(parseJson(text), (json) => (isEverydayChunk(json) ? Either.right(json) : decodeChunkJson(json)))
