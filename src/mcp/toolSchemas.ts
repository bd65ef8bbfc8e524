import { Array as Arr, Effect, JSONSchema, ParseResult, Schema } from "effect"
import { CallStatus, ErrorInfo, RunStatus, Usage } from "../domain/manifest.js"
import { ModelId } from "../domain/model.js"
import { SettingsDescription } from "../settings/describe.js"
import { McpOverrides } from "../settings/mcpOverrides.js"

// One Effect Schema per tool input and output. Each one both checks (arguments coming from the client
// are decoded with it, structured results are encoded with it on their way out) and generates the JSON
// Schema the tool advertises, so the two can never disagree. Output fields that do not apply are left out.

/** The most candidate models one call may ask: a guard against a runaway (and costly) argument. */
export const MAX_MODELS_PER_CALL = 16

const ModelArgument = Schema.compose(Schema.String, ModelId).annotations({
  description: "An OpenRouter model id, e.g. \"openai/gpt-5\" or \"anthropic/claude-sonnet-4.5\"."
})

// --- process_prompt ---

export const ProcessPromptInput = Schema.Struct({
  prompt: Schema.String.pipe(
    Schema.filter((s) => s.trim() !== "" || "the prompt is empty"),
    Schema.minLength(1)
  ).annotations({
    title: "Prompt",
    description: "The question or task, as you would ask one model. Every candidate model gets it unchanged."
  }),
  models: Schema.optionalWith(
    Schema.Array(ModelArgument).pipe(Schema.minItems(1), Schema.maxItems(MAX_MODELS_PER_CALL)).annotations({
      title: "Candidate models",
      description: `Candidate models for this call only (1 to ${MAX_MODELS_PER_CALL}). Default: the server's configured candidates.`
    }),
    { exact: true }
  ),
  synthesizer: Schema.optionalWith(
    ModelArgument.annotations({
      title: "Synthesizer",
      description: "The model that merges the answers, for this call only. Default: the server's configured synthesizer."
    }),
    { exact: true }
  ),
  // deadline, quorum, grace: the settings the table lets one call override.
  ...McpOverrides.fields
})
export type ProcessPromptInput = typeof ProcessPromptInput.Type

// --- list_runs and resynthesize ---

export const ListRunsInput = Schema.Struct({
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 200)).annotations({ title: "Limit", description: "How many runs, newest first (default 20)." }),
    { exact: true }
  )
})

export const ListRunsOutput = Schema.Struct({
  runs: Schema.Array(Schema.Struct({
    runId: Schema.String,
    /** `running` while a run has no manifest yet. */
    status: Schema.Union(RunStatus, Schema.Literal("running")),
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
  }))
})
export type ListRunsOutput = typeof ListRunsOutput.Type

export const ResynthesizeInput = Schema.Struct({
  runId: Schema.String.annotations({ title: "Run id", description: "The run whose candidates' answers to synthesize again (see list_runs)." }),
  synthesizer: Schema.optionalWith(
    ModelArgument.annotations({ title: "Synthesizer", description: "Default: the synthesizer the run used." }),
    { exact: true }
  )
})

const CandidateSummary = Schema.Struct({
  model: Schema.String,
  status: CallStatus,
  servedBy: Schema.optional(Schema.String),
  latencyMs: Schema.optional(Schema.Number),
  attempts: Schema.Number,
  /** Relative to the run directory, when the candidate answered. */
  file: Schema.optional(Schema.String),
  /** The answer as an MCP resource, when the candidate answered. */
  uri: Schema.optional(Schema.String),
  /** What arrived of an answer that broke off (relative to the run directory). */
  partialFile: Schema.optional(Schema.String),
  error: Schema.optional(ErrorInfo),
  reason: Schema.optional(Schema.String)
})

const SynthesisSummary = Schema.Struct({
  model: Schema.String,
  status: CallStatus,
  servedBy: Schema.optional(Schema.String),
  latencyMs: Schema.optional(Schema.Number),
  error: Schema.optional(ErrorInfo),
  fallbackToCandidate: Schema.optional(Schema.String)
})

export const ProcessPromptOutput = Schema.Struct({
  runId: Schema.String,
  status: RunStatus,
  /** The final answer; null when the run produced none. */
  final: Schema.NullOr(Schema.String),
  runDir: Schema.String,
  candidates: Schema.Array(CandidateSummary),
  synthesis: Schema.optional(SynthesisSummary),
  durationMs: Schema.Number,
  usage: Usage,
  error: Schema.optional(Schema.String)
})
export type ProcessPromptOutput = typeof ProcessPromptOutput.Type

// --- list_models ---

/** No arguments at all: an unknown one is refused by name. */
export const NoArguments = Schema.Record({ key: Schema.String, value: Schema.Never })

export const ListModelsOutput = Schema.Struct({
  models: Schema.Array(Schema.Struct({
    role: Schema.Literal("candidate", "synthesizer", "fallback"),
    id: Schema.String,
    /** Whether the provider lists the model; null when its list could not be fetched. */
    found: Schema.NullOr(Schema.Boolean),
    contextLength: Schema.optional(Schema.Number),
    promptUsdPerMillion: Schema.optional(Schema.Number),
    completionUsdPerMillion: Schema.optional(Schema.Number)
  })),
  candidates: Schema.Array(Schema.String),
  synthesizer: Schema.String,
  fallbackSynthesizers: Schema.Array(Schema.String),
  /** Why the provider's model list could not be checked, when it could not. */
  catalogueError: Schema.optional(Schema.String)
})
export type ListModelsOutput = typeof ListModelsOutput.Type

// --- get_config ---

/** The effective settings, as the settings table describes them (never the key). */
export const GetConfigOutput = SettingsDescription
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
 */
export const objectJsonSchema = <A, I>(schema: Schema.Schema<A, I>): typeof ObjectJsonSchema.Type =>
  Schema.decodeUnknownSync(ObjectJsonSchema)(JSONSchema.make(schema))

// --- Decoding arguments ---

/** Tool arguments that do not match the tool's input schema; the message names every offending field. */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>()("InvalidArguments", {
  tool: Schema.String,
  fields: Schema.Array(Schema.String),
  message: Schema.String
}) {}

const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0 ? "(arguments)" : path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("")

/** Decodes a tool's arguments (absent arguments count as `{}`), refusing unknown fields. */
export const decodeArguments = <A, I>(tool: string, schema: Schema.Schema<A, I>, args: unknown) =>
  Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(args ?? {}).pipe(
    Effect.mapError((error) => {
      // One line per field (a union, say, reports each of its branches): keep the first.
      const issues = Arr.dedupeWith(ParseResult.ArrayFormatter.formatErrorSync(error), (a, b) => fieldOf(a.path) === fieldOf(b.path))
      const fields = issues.map((issue) => fieldOf(issue.path))
      const details = issues.map((issue) =>
        issue._tag === "Unexpected" ? `${fieldOf(issue.path)}: unknown argument` : `${fieldOf(issue.path)}: ${issue.message}`
      )
      return new InvalidArguments({ tool, fields, message: `Invalid arguments for ${tool}: ${details.join("; ")}` })
    })
  )
