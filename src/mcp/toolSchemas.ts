import { Array as Arr, Effect, JSONSchema, ParseResult, Schema } from "effect"
import { ShallowJson } from "../domain/jsonDepth.js"
import { ModelId } from "../domain/model.js"
import { StrategyName } from "../domain/strategy.js"
import { SettingsDescription } from "../settings/describe.js"
import { McpOverrides } from "../settings/mcpOverrides.js"
import { plainIssue } from "./argumentIssues.js"
import { RunOutputStatus } from "./runOutput.js"

// One Effect Schema per tool input and output. Each one both checks (arguments coming from the client
// are decoded with it, structured results are encoded with it on their way out) and generates the JSON
// Schema the tool advertises, so the two can never disagree. Output fields that do not apply are left out.

const ModelArgument = Schema.compose(Schema.String, ModelId).annotations({ jsonSchema: { type: "string" } })

/** How long one call waits for its run; the run goes on either way. */
const Wait = Schema.Number.pipe(Schema.between(0, 3_600)).annotations({
  description: "Seconds to wait (0: none)."
})

// The tools' descriptions say where a run id comes from.
const RunId = Schema.String

// --- process_prompt ---

export const ProcessPromptInput = Schema.Struct({
  prompt: Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "the prompt is empty"), Schema.minLength(1)).annotations({
    description: "The whole question or task, as you would ask one model."
  }),
  models: Schema.optionalWith(
    // The upper bound is the server's `maxModels`, checked with the rest of the run before any call.
    Schema.Array(ModelArgument).pipe(Schema.minItems(1)).annotations({
      description: "Candidate model ids."
    }),
    { exact: true }
  ),
  synthesizer: Schema.optionalWith(ModelArgument, { exact: true }),
  // deadline, quorum, grace: the settings the table lets one call override.
  ...McpOverrides.fields,
  wait: Schema.optionalWith(Wait, { exact: true }),
  files: Schema.optionalWith(
    Schema.Array(Schema.String.pipe(Schema.minLength(1))).annotations({
      description: "Paths or globs to attach (text, images, PDFs)."
    }),
    { exact: true }
  ),
  web: Schema.optionalWith(
    Schema.Boolean.annotations({ description: "Candidates search the web." }),
    { exact: true }
  ),
  strategy: Schema.optionalWith(
    StrategyName.annotations({ description: "How answers are combined." }),
    { exact: true }
  ),
  preset: Schema.optionalWith(
    Schema.String.annotations({ description: "A preset from list_models; arguments beat it." }),
    { exact: true }
  )
})
export type ProcessPromptInput = typeof ProcessPromptInput.Type

// --- list_runs and resynthesize ---

export const ListRunsInput = Schema.Struct({
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 200)).annotations({
      description: "Default 20."
    }),
    { exact: true }
  )
})

export const ListRunsOutput = Schema.Struct({
  runs: Schema.Array(
    Schema.Struct({
      runId: Schema.String,
      /** `running` while a run has no manifest yet. */
      status: RunOutputStatus,
      createdAt: Schema.optional(Schema.String),
      durationMs: Schema.optional(Schema.Number),
      answered: Schema.optional(Schema.Number),
      total: Schema.optional(Schema.Number),
      cost: Schema.optional(Schema.Number),
      prompt: Schema.String,
      runDir: Schema.String,
      /** The final answer as an MCP resource, when there is one. */
      finalUri: Schema.optional(Schema.String),
      source: Schema.optional(Schema.String)
    }).annotations({
      jsonSchema: {
        type: "object",
        required: ["runId", "status", "prompt", "runDir"],
        description: "runId, status, createdAt?, durationMs?, answered?, total?, cost?, prompt (its start), runDir, finalUri?, source?"
      }
    })
  )
})
export type ListRunsOutput = typeof ListRunsOutput.Type

export const ResynthesizeInput = Schema.Struct({
  runId: RunId,
  // Default: the run's synthesizer.
  synthesizer: Schema.optionalWith(ModelArgument, { exact: true }),
  wait: Schema.optionalWith(Wait, { exact: true })
})

export const GetRunInput = Schema.Struct({ runId: RunId, wait: Schema.optionalWith(Wait, { exact: true }) })

export const CancelRunInput = Schema.Struct({ runId: RunId })

// --- continue_run ---

export const ContinueRunInput = Schema.Struct({
  runId: RunId,
  prompt: ProcessPromptInput.fields.prompt.annotations({ description: "The follow-up question." }),
  models: ProcessPromptInput.fields.models,
  synthesizer: ProcessPromptInput.fields.synthesizer,
  ...McpOverrides.fields,
  wait: Schema.optionalWith(Wait, { exact: true }),
  files: ProcessPromptInput.fields.files,
  preset: ProcessPromptInput.fields.preset
})

// --- list_models ---

/** No arguments at all: an unknown one is refused by name. */
export const NoArguments = Schema.Record({ key: Schema.String, value: Schema.Never })

export const ListModelsOutput = Schema.Struct({
  models: Schema.Array(
    Schema.Struct({
      role: Schema.Literal("candidate", "synthesizer", "fallback"),
      id: Schema.String,
      /** Whether the provider lists the model; null when its list could not be fetched. */
      found: Schema.NullOr(Schema.Boolean),
      contextLength: Schema.optional(Schema.Number),
      promptUsdPerMillion: Schema.optional(Schema.Number),
      completionUsdPerMillion: Schema.optional(Schema.Number)
    }).annotations({
      jsonSchema: {
        type: "object",
        required: ["role", "id", "found"],
        description:
          "role (candidate, synthesizer, fallback), id, found (null: not checked), contextLength?, promptUsdPerMillion?, completionUsdPerMillion?"
      }
    })
  ),
  candidates: Schema.Array(Schema.String),
  synthesizer: Schema.String,
  fallbackSynthesizers: Schema.Array(Schema.String),
  /** Why the provider's model list could not be checked, when it could not. */
  catalogueError: Schema.optional(Schema.String),
  /** The config file's presets: what `preset` of process_prompt may name. */
  presets: Schema.optional(
    Schema.Array(Schema.Struct({ name: Schema.String, models: Schema.Array(Schema.String) })).annotations({
      jsonSchema: { type: "array", description: "Presets for process_prompt: name, models." }
    })
  )
})
export type ListModelsOutput = typeof ListModelsOutput.Type

// --- get_config ---

/** The effective settings, as the settings table describes them (never the key); advertised in a line. */
export const GetConfigOutput = SettingsDescription.annotations({
  jsonSchema: { type: "object", description: "Each effective setting by name; apiKey is only ever \"<redacted>\" or \"<not set>\"." }
})
export type GetConfigOutput = typeof GetConfigOutput.Type

// --- JSON Schema for the tool list ---

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
