import { Schema } from "effect"
import { CallStatus, ErrorInfo, RunStatus, RunUsage } from "../domain/manifest.js"
import { AvailableReport, UnavailableReport } from "../domain/report.js"

// What every run-shaped tool returns (process_prompt, get_run, cancel_run, resynthesize) as
// `structuredContent`. Most clients hand their model this JSON and nothing else, so it is written for a
// model to read: the answer first, then a one-paragraph summary, then what to do next, then the facts.
// The candidates' own texts are never in it (they are files: see `files`).

// Nested objects are advertised in a line of prose rather than in full JSON Schema: the tool list goes
// into every conversation's context. They are still checked in full when a result is encoded.
const brief = (required: ReadonlyArray<string>, description: string) => ({ jsonSchema: { type: "object", required, description } })

const CandidateSummary = Schema.Struct({
  model: Schema.String,
  status: Schema.Union(CallStatus, Schema.Literal("running", "waiting")),
  latencyMs: Schema.optional(Schema.Number),
  attempts: Schema.optional(Schema.Number),
  servedBy: Schema.optional(Schema.String),
  error: Schema.optional(ErrorInfo),
  /** Why a policy cut it: `deadline`, `quorum`, `interrupted`. */
  reason: Schema.optional(Schema.String)
}).annotations(brief(["model", "status"], "model, status, latencyMs?, attempts?, servedBy?, error? {tag, message, httpStatus?}, reason?"))

const SynthesisSummary = Schema.Struct({
  model: Schema.String,
  status: Schema.Union(CallStatus, Schema.Literal("running")),
  latencyMs: Schema.optional(Schema.Number),
  servedBy: Schema.optional(Schema.String),
  error: Schema.optional(ErrorInfo),
  fallbackToCandidate: Schema.optional(Schema.String)
}).annotations(brief(["model", "status"], "model, status, latencyMs?, servedBy?, error?, fallbackToCandidate?"))

/** The report with the label → model map, so a model reading it knows who said what. */
const ReportOutput = Schema.Union(
  Schema.Struct({ ...AvailableReport.fields, labels: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })) }),
  UnavailableReport
).annotations(brief(
  ["status"],
  "Disagreement report: agreements, contradictions, uniqueClaims, confidence, labels (label → model); or status unavailable, reason"
))

export const RunOutputStatus = Schema.Union(RunStatus, Schema.Literal("running"))
export type RunOutputStatus = typeof RunOutputStatus.Type

export const RunOutput = Schema.Struct({
  /** The final answer (Markdown); null while the run goes, or when it produced none. */
  final: Schema.NullOr(Schema.String),
  /** Who answered, who failed and why, the run id: one paragraph. */
  summary: Schema.String,
  /** What to do next, when there is something to do (`running`: call get_run). */
  next: Schema.optional(Schema.String),
  /** What the candidates agree and disagree on, when the run has an answer (after the contract's first three keys). */
  report: Schema.optional(ReportOutput),
  runId: Schema.String,
  status: RunOutputStatus,
  runDir: Schema.String,
  /** Each file of the run (relative path) → its `parallel-llm://runs/…` resource URI. */
  files: Schema.Record({ key: Schema.String, value: Schema.String }),
  candidates: Schema.Array(CandidateSummary),
  synthesis: Schema.optional(SynthesisSummary),
  /** Run time so far (running) or in all (finished). */
  durationMs: Schema.optional(Schema.Number),
  usage: Schema.optional(
    RunUsage.annotations(
      brief(
        [],
        "promptTokens?, completionTokens?, cost? (USD), unreportedCalls?, estimatedCalls?"
      )
    )
  ),
  /** Why the run has no answer, when it has none. */
  error: Schema.optional(Schema.String),
  /** For a re-synthesis: the run whose answers were merged again. */
  source: Schema.optional(Schema.String),
  /** For a follow-up question: the run it continues. */
  parent: Schema.optional(Schema.String)
})
export type RunOutput = typeof RunOutput.Type
