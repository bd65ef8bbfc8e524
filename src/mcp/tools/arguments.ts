import { Array as Arr, Effect, JSONSchema, ParseResult, Schema } from "effect"
import { ShallowJson } from "../../domain/jsonDepth.js"
import { plainIssue } from "../argumentIssues.js"

// Each tool's input and output is one Effect Schema (in the tool's own file). It both checks (arguments
// coming from the client are decoded with it, structured results are encoded with it on their way out) and
// generates the JSON Schema the tool advertises, so the two can never disagree.

/** What MCP accepts as a tool's `inputSchema` / `outputSchema`: an object schema at the root. */
const ObjectJsonSchema = Schema.Struct(
  { type: Schema.Literal("object"), properties: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Object })) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/**
 * The JSON Schema of a tool's input or output, generated from its Effect Schema. A schema whose root is
 * not an object is a programming error, caught the first time the module loads (and by the tests).
 * The tool list goes into every conversation's context, so it is compacted (see `compact`); an output
 * schema, which only clients read (to check results), also loses its descriptions.
 */
export const objectJsonSchema = <A, I>(
  schema: Schema.Schema<A, I>,
  options: { readonly descriptions: boolean } = { descriptions: true }
): typeof ObjectJsonSchema.Type => {
  const { $schema: _dialect, ...jsonSchema } = JSONSchema.make(schema)
  return Schema.decodeUnknownSync(ObjectJsonSchema)(compact(jsonSchema, options.descriptions))
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** `{anyOf: [{type: "string"}, {type: "null"}]}` as `{type: ["string", "null"]}`, when every branch is a bare type. */
const bareTypes = (branches: unknown): ReadonlyArray<unknown> | undefined =>
  Array.isArray(branches) && branches.every((b) => isRecord(b) && Object.keys(b).length === 1 && typeof b.type === "string")
    ? branches.map((b: Record<string, unknown>) => b.type)
    : undefined

/**
 * What costs a model's context and checks nothing: `$schema`, the titles and the descriptions Effect makes
 * up from filters ("between(1, 16)", "a string at least 1 character(s) long"), empty `required` and
 * `properties`; unions of bare types become one `type`. Descriptions go too unless `descriptions`.
 */
const compact = (value: unknown, descriptions: boolean): unknown => {
  if (Array.isArray(value)) return value.map((inner) => compact(inner, descriptions))
  if (!isRecord(value)) return value
  const types = bareTypes(value.anyOf)
  const entries = Object.entries(types === undefined ? value : { ...value, anyOf: undefined, type: types }).filter(([key, inner]) =>
    inner !== undefined &&
    !(key === "title" && typeof inner === "string") &&
    !(key === "description" && typeof inner === "string" && (!descriptions || GENERATED.test(inner))) &&
    !(key === "required" && Array.isArray(inner) && inner.length === 0) &&
    !(key === "properties" && isRecord(inner) && Object.keys(inner).length === 0)
  )
  return Object.fromEntries(entries.map(([key, inner]) => [
    key,
    // The keys of `properties` are field names, not keywords: only their schemas are compacted.
    key === "properties" && isRecord(inner)
      ? Object.fromEntries(Object.entries(inner).map(([name, field]) => [name, compact(field, descriptions)]))
      : compact(inner, descriptions)
  ]))
}

/** The descriptions Effect generates for its own filters. */
const GENERATED = /^(?:a string at least|a string at most|a number|an integer|a positive|a non-negative|a finite)/

// --- Decoding arguments ---

/** Tool arguments that do not match the tool's input schema; the message names every offending field. */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>()("InvalidArguments", {
  tool: Schema.String,
  fields: Schema.Array(Schema.String),
  message: Schema.String
}) {}

const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "(arguments)"
    : path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("")

/**
 * Decodes a tool's arguments (absent arguments count as `{}`), refusing unknown fields, and first arguments
 * nested too deep for the schema's recursive decoding (300,000 levels overflow the stack); each refused field
 * is said with what it may be, as the tool's advertised input schema says it.
 */
export const decodeArguments = <A, I>(tool: string, schema: Schema.Schema<A, I>, args: unknown) =>
  Schema.decodeUnknown(Schema.compose(ShallowJson, schema, { strict: false }), { errors: "all", onExcessProperty: "error" })(
    args ?? {}
  ).pipe(
    Effect.mapError((error) => {
      // One line per field (a union, say, reports each of its branches): keep the first.
      const issues = Arr.dedupeWith(ParseResult.ArrayFormatter.formatErrorSync(error), (a, b) => fieldOf(a.path) === fieldOf(b.path))
      const fields = issues.map((issue) => fieldOf(issue.path))
      const advertised = objectJsonSchema(schema)
      const details = issues.map((issue) => plainIssue(advertised, args ?? {}, issue, fieldOf(issue.path)))
      return new InvalidArguments({ tool, fields, message: `Invalid arguments for ${tool}: ${details.join("; ")}` })
    })
  )
