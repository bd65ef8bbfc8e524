import { Schema } from "effect"

// The disagreement report: what the synthesizer found when it compared the candidates. Candidates are named
// by the anonymous labels the synthesizer saw (A, B, …); the manifest's `synthesis.labels` maps them to models.

const Labels = Schema.Array(Schema.String).annotations({ description: "Labels of the candidates that say it (A, B, …)." })

export const Contradiction = Schema.Struct({
  topic: Schema.String.annotations({ description: "What the candidates disagree about, in a few words." }),
  positions: Schema.Array(Schema.Struct({ candidates: Labels, claim: Schema.String })).annotations({
    description: "Each position taken, with the candidates that take it."
  })
})
export type Contradiction = typeof Contradiction.Type

/** What the synthesizer reports beside its answer, as it writes it (structured output, or JSON after the delimiter). */
export const ReportFindings = Schema.Struct({
  agreements: Schema.Array(Schema.String).annotations({ description: "Points every candidate agrees on." }),
  contradictions: Schema.Array(Contradiction).annotations({ description: "Points where candidates contradict each other." }),
  uniqueClaims: Schema.Array(Schema.Struct({
    candidate: Schema.String.annotations({ description: "The label of the one candidate that makes the claim." }),
    claim: Schema.String
  })).annotations({ description: "Claims only one candidate makes." }),
  confidence: Schema.Literal("high", "medium", "low").annotations({ description: "How sure you are of your answer." }),
  confidenceReason: Schema.String.annotations({ description: "Why, in one sentence." })
})
export type ReportFindings = typeof ReportFindings.Type

/** How the synthesizer was asked for the report: the provider's structured output, or plain text after a delimiter line. */
export const ReportVia = Schema.Literal("structured", "text")
export type ReportVia = typeof ReportVia.Type

/**
 * The `reportVia` setting: `text` (the default: the answer is written freely and the report follows it after a
 * delimiter), `structured` (the whole reply is one JSON object, where the synthesizer supports structured
 * output; format restrictions may cost reasoning accuracy, so this is asked for, never assumed), `off` (no report).
 */
export const ReportMode = Schema.Literal("text", "structured", "off")
export type ReportMode = typeof ReportMode.Type

export const AvailableReport = Schema.Struct({
  status: Schema.Literal("ok"),
  via: ReportVia,
  ...ReportFindings.fields
})
export type AvailableReport = typeof AvailableReport.Type

/** No report could be read (or there was no synthesis to report on): why. The answer is unaffected. */
export const UnavailableReport = Schema.Struct({
  status: Schema.Literal("unavailable"),
  reason: Schema.String
})
export type UnavailableReport = typeof UnavailableReport.Type

/** The manifest's `report`. */
export const Report = Schema.Union(AvailableReport, UnavailableReport)
export type Report = typeof Report.Type

export const unavailableReport = (reason: string): UnavailableReport => ({ status: "unavailable", reason })
