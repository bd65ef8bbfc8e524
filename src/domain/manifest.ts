import { Schema } from "effect"
import { Citation, SentOptions } from "./modelOptions.js"
import { Report } from "./report.js"

// The run manifest (`run.json`) exactly as the contract describes it. Fields that do not apply are absent.

export const Usage = Schema.Struct({
  promptTokens: Schema.Number,
  completionTokens: Schema.Number,
  cost: Schema.optional(Schema.Number),
  /** Of the completion tokens, those spent reasoning (when the server says). */
  reasoningTokens: Schema.optional(Schema.Number),
  /** Of the prompt tokens, those read from the provider's cache (when the server says). */
  cachedTokens: Schema.optional(Schema.Number),
  /** What the upstream provider charged, in USD, where the router says (OpenRouter's `cost_details`). */
  costDetails: Schema.optional(Schema.Struct({
    upstreamInferenceCost: Schema.optional(Schema.Number),
    upstreamPromptCost: Schema.optional(Schema.Number),
    upstreamCompletionCost: Schema.optional(Schema.Number)
  })),
  /**
   * The server reported no usage for a call that gave no answer but was billed (it streamed, then failed or was
   * cut): the tokens are estimated from the prompt's and the streamed text's length, and the cost is unknown.
   */
  estimated: Schema.optional(Schema.Boolean),
  /** `subscription`: reported by a CLI agent on the user's plan, not billed per call (docs/cli-agents.md). */
  source: Schema.optional(Schema.Literal("subscription"))
})
export type Usage = typeof Usage.Type

/**
 * A run's usage: the totals over the calls that reported theirs. Tokens and cost are absent, never 0, when no
 * call reported them (`unreportedCalls` then says how many answered without saying); the cost is rounded to
 * 1e-10 USD, the precision of the provider's own figures, so that a sum carries no float noise.
 */
export const RunUsage = Schema.Struct({
  promptTokens: Schema.optional(Schema.Number),
  completionTokens: Schema.optional(Schema.Number),
  cost: Usage.fields.cost,
  reasoningTokens: Usage.fields.reasoningTokens,
  cachedTokens: Usage.fields.cachedTokens,
  /** Calls that answered but reported no usage (many local servers): their tokens are unknown, not counted as 0. */
  unreportedCalls: Schema.optional(Schema.Number),
  /** Calls whose tokens are in the totals as estimates (see `Usage.estimated`): the cost leaves them out, unknown. */
  estimatedCalls: Schema.optional(Schema.Number)
})
export type RunUsage = typeof RunUsage.Type

export const ErrorInfo = Schema.Struct({
  tag: Schema.String,
  message: Schema.String,
  httpStatus: Schema.optional(Schema.Number)
})
export type ErrorInfo = typeof ErrorInfo.Type

/** `interrupted` is never written by a run: readers give it to a run whose owner died before its manifest (see runState.ts). */
export const RunStatus = Schema.Literal("ok", "partial", "failed", "cancelled", "interrupted")
export type RunStatus = typeof RunStatus.Type
/** The statuses a run gives itself when it ends. */
export type FinishedRunStatus = Exclude<RunStatus, "interrupted">

export const CallStatus = Schema.Literal("ok", "error", "timeout", "cancelled")
export type CallStatus = typeof CallStatus.Type

/** What every model call records, candidate or synthesis. */
const callFields = {
  model: Schema.String,
  servedBy: Schema.optional(Schema.String),
  status: CallStatus,
  file: Schema.optional(Schema.String),
  latencyMs: Schema.optional(Schema.Number),
  attempts: Schema.Number,
  usage: Schema.optional(Usage),
  finishReason: Schema.optional(Schema.String),
  error: Schema.optional(ErrorInfo),
  /** The answer arrived but its file could not be written (a full disk): why. The record then names no file. */
  writeError: Schema.optional(Schema.String),
  /** What the model was sent besides the prompt: its effective options (temperature, reasoning, routing, web…). */
  options: Schema.optional(SentOptions),
  /** OpenRouter's response cache (`--cache`): a hit was answered from it, free. */
  cache: Schema.optional(Schema.Literal("hit", "miss")),
  /** A hit's age: seconds since the cached answer was made. */
  cacheAgeSeconds: Schema.optional(Schema.Number)
}

export const CandidateRecord = Schema.Struct({
  ...callFields,
  /** Why the policy cut it: `deadline`, `quorum` (or `interrupted`). */
  reason: Schema.optional(Schema.String),
  /** The text an answer had produced before it broke off. */
  partialFile: Schema.optional(Schema.String),
  /** The web pages the answer cited (web search). */
  citations: Schema.optional(Schema.Array(Citation))
})
export type CandidateRecord = typeof CandidateRecord.Type

export const SynthesisRecord = Schema.Struct({
  ...callFields,
  /** Which anonymous label stood for which candidate, in the order the synthesizer saw them. */
  labels: Schema.optional(Schema.Array(Schema.Struct({ label: Schema.String, model: Schema.String }))),
  /** Candidates shortened to fit the synthesizer's budget, and by how many characters. */
  truncated: Schema.optional(Schema.Array(Schema.Struct({ model: Schema.String, cutChars: Schema.Number }))),
  /** Synthesizers that failed, in the order tried: those before the one that answered, or all of them. */
  failedSynthesizers: Schema.optional(Schema.Array(Schema.Struct({ model: Schema.String, attempts: Schema.Number, error: ErrorInfo }))),
  /** Every synthesizer failed: the answer is this candidate's, headed by a notice. */
  fallbackToCandidate: Schema.optional(Schema.String)
})
export type SynthesisRecord = typeof SynthesisRecord.Type

/** What every strategy's record holds besides its name and its own fields. */
export const sharedStrategyFields = {
  /** Why a strategy's step was skipped or cut short (one answer has nothing to rank). */
  note: Schema.optional(Schema.String),
  /**
   * The strategy fell back: its own step did not shape the answer (no ranking counted, a refinement round
   * nobody answered), so the run is a plain synthesis of what there was, paid for as the strategy. Why, in one line.
   */
  degraded: Schema.optional(Schema.String)
}

/**
 * A strategy's record, as every reader below the programs sees it: its name, the shared fields, and its own
 * fields (rank's judges, refine's rounds…) kept as they are, unread, on decode and encode, so that a run of any
 * strategy, this version's or another's, is read and written again without losing any. Each strategy declares
 * its own fields in its module (src/programs/strategies/); the registry there narrows a record to them.
 */
export const StrategyRecord = Schema.Struct(
  { name: Schema.String, ...sharedStrategyFields },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type StrategyRecord = typeof StrategyRecord.Type

export const RunSettings = Schema.Struct({
  models: Schema.Array(Schema.String),
  synthesizer: Schema.String,
  concurrency: Schema.Number,
  timeoutMs: Schema.Number,
  retries: Schema.Number,
  temperature: Schema.optional(Schema.Number),
  maxTokens: Schema.optional(Schema.Number),
  baseUrl: Schema.optional(Schema.String),
  fallbackSynthesizers: Schema.optional(Schema.Array(Schema.String)),
  stream: Schema.optional(Schema.Boolean),
  deadlineMs: Schema.optional(Schema.Number),
  quorum: Schema.optional(Schema.Number),
  graceMs: Schema.optional(Schema.Number),
  /** The run-wide reasoning effort, when one was set. */
  reasoning: Schema.optional(Schema.String),
  /** Whether the candidates searched the web. */
  web: Schema.optional(Schema.Boolean)
})
export type RunSettings = typeof RunSettings.Type

/** How a candidate received an attachment: its text in the prompt, an image part, a file part, or a note saying it could not see it. */
export const AttachmentForm = Schema.Literal("text", "image", "file", "note")
export type AttachmentForm = typeof AttachmentForm.Type

/** One attached file: as given, its copy in the run directory, and what each candidate model was sent. */
export const AttachmentRecord = Schema.Struct({
  /** The path as given (for a directory or a glob: the path of each file found, below what was given). */
  path: Schema.String,
  /** The copy, relative to the run directory: `attachments/NN-<name>`. */
  file: Schema.String,
  bytes: Schema.Number,
  sha256: Schema.String,
  /** Decided from the content (magic bytes), not the extension. */
  mediaType: Schema.String,
  /** Candidate model id → how it received the file. */
  sentAs: Schema.Record({ key: Schema.String, value: AttachmentForm }),
  /** Why a model got a note instead of an image, when the reason is not the model's own (`/models` unreadable). */
  note: Schema.optional(Schema.String)
})
export type AttachmentRecord = typeof AttachmentRecord.Type

export const Manifest = Schema.Struct({
  id: Schema.String,
  status: RunStatus,
  createdAt: Schema.String,
  finishedAt: Schema.String,
  durationMs: Schema.Number,
  prompt: Schema.Struct({ chars: Schema.Number, sha256: Schema.String }),
  settings: RunSettings,
  candidates: Schema.Array(CandidateRecord),
  synthesis: Schema.optional(SynthesisRecord),
  usage: RunUsage,
  /** For a re-synthesis: the run whose candidates' answers were synthesized again. */
  source: Schema.optional(Schema.String),
  /** For a follow-up question: the run it continues (whose prompt and answer its candidates were sent). */
  parent: Schema.optional(Schema.String),
  /** Why the run failed or stopped, when it did not produce an answer. */
  error: Schema.optional(Schema.String),
  /** Files of the run that could not be written, and why: the run went on without them. */
  unwritten: Schema.optional(Schema.Array(Schema.Struct({ file: Schema.String, message: Schema.String }))),
  /** The files attached to the prompt, copied into `attachments/`. */
  attachments: Schema.optional(Schema.Array(AttachmentRecord)),
  /** The disagreement report that came with the synthesized answer (labels as in `synthesis.labels`). */
  report: Schema.optional(Report),
  /** The aggregation strategy, and what it did (absent in runs made before strategies existed: `synthesize`). */
  strategy: Schema.optional(StrategyRecord)
})
export type Manifest = typeof Manifest.Type
