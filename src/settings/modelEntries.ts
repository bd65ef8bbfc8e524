import { Either, ParseResult, Schema } from "effect"
import { ModelOptions, ModelSpec } from "../domain/modelOptions.js"

// In the config file a model is an id or an object `{ "id", …options }`. The loader turns a model value into
// its ids as text (so that flags, environment and file share one schema and one message) and keeps the
// objects' options apart, keyed by id: `settings.modelOptions`.

const decodeSpec = Schema.decodeUnknownEither(ModelSpec, { onExcessProperty: "error", errors: "first" })

/** The model an object names, for a message: its id when it has a usable one. */
const nameOf = (input: unknown): string => {
  const id: unknown = typeof input === "object" && input !== null && "id" in input ? input.id : undefined
  return typeof id === "string" && id.trim() !== "" ? `model ${JSON.stringify(id.trim())}` : "a model object"
}

/** One line: the model, the field and what is wrong with it (`model "x": temprature: unknown key`). */
const problemOf = (input: unknown, error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (issue === undefined) return `${nameOf(input)}: invalid`
  const field = issue.path.join(".")
  const what = issue._tag === "Unexpected" ? "unknown key" : issue._tag === "Missing" ? "missing" : issue.message
  return `${nameOf(input)}: ${field === "" ? "" : `${field}: `}${what.replace(/\s+/g, " ")}`
}

/** One model in the config file: an id, or an object with options (unknown keys refused, naming the model). */
export const ModelEntry = Schema.transformOrFail(Schema.Unknown, Schema.Union(Schema.String, Schema.typeSchema(ModelSpec)), {
  strict: true,
  decode: (input, _, ast) => {
    if (typeof input === "string") return ParseResult.succeed(input)
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return ParseResult.fail(new ParseResult.Type(ast, input, "expected a model id or an object with an \"id\""))
    }
    return Either.match(decodeSpec(input), {
      onLeft: (error) => ParseResult.fail(new ParseResult.Type(ast, input, problemOf(input, error))),
      onRight: ParseResult.succeed
    })
  },
  encode: ParseResult.succeed
})
export type ModelEntry = typeof ModelEntry.Type

/** A list of models in the config file: an array of entries, or the ids as comma-separated text. */
export const ModelEntries = Schema.Union(Schema.Array(ModelEntry), Schema.String)

const isSpec = (value: unknown): value is ModelSpec => typeof value === "object" && value !== null && "id" in value

/**
 * A decoded config-file value as the text a flag would give: a model object stands for its id. An empty array
 * is empty text, which each list kind reads as its own "nothing" (no fallbacks, no extra directories) or refuses
 * (a panel of no models); never a value of its own.
 */
export const fileValueText = (value: unknown): string =>
  Array.isArray(value)
    ? value.map((v) => (isSpec(v) ? v.id : String(v))).join(",")
    : isSpec(value)
    ? value.id
    : String(value)

/** The model objects in a decoded config-file value. */
export const specsIn = (value: unknown): ReadonlyArray<ModelSpec> =>
  Array.isArray(value) ? value.filter(isSpec) : isSpec(value) ? [value] : []

/** A model object's options without its id: only what it sets. */
const optionsOf = ({ id: _id, ...options }: ModelSpec): ModelOptions => options

/**
 * The options of every model object, keyed by id. The same id configured twice (a candidate that is also
 * the synthesizer) must say the same thing: otherwise the message names it.
 */
export const collectModelOptions = (
  specs: ReadonlyArray<ModelSpec>
): Either.Either<Readonly<Record<string, ModelOptions>>, string> => {
  const same = Schema.equivalence(ModelOptions)
  const byId: Record<string, ModelOptions> = {}
  for (const spec of specs) {
    const options = optionsOf(spec)
    const known = byId[spec.id]
    if (known !== undefined && !same(known, options)) {
      return Either.left(`model ${JSON.stringify(spec.id)} is configured twice with different options; give its options once`)
    }
    byId[spec.id] = options
  }
  return Either.right(byId)
}
