import { Either, JSONSchema, ParseResult, Schema } from "effect"
import { type AvailableReport, type Report, ReportFindings, type ReportVia, unavailableReport } from "../domain/report.js"
import { stripControl } from "../domain/text.js"

// The synthesizer's one reply holds the answer and the report. Asked with structured output, it is a JSON
// object whose `answer` comes first (so it streams first); asked in plain text, it is the answer, a delimiter
// line, then the report as JSON. Either way the answer is never lost: a reply that does not decode keeps its
// text as the answer and records the report as unavailable, with the reason.

/** The structured reply: the answer, then the report's fields. */
export const SynthesisReply = Schema.Struct({
  answer: Schema.String.annotations({ description: "Your whole answer to the user's prompt, in Markdown." }),
  ...ReportFindings.fields
})

// Strict structured output wants a plain object schema: no `$schema` key, no top-level `$ref`.
const jsonSchemaOf = (schema: Schema.Schema.Any) => JSONSchema.fromAST(schema.ast, { definitions: {}, topLevelReferenceStrategy: "skip" })

/** Sent as `response_format` (strict `json_schema`) when the synthesizer supports structured output. */
export const SYNTHESIS_REPLY_FORMAT = { name: "synthesis", schema: jsonSchemaOf(SynthesisReply) }

/** The report's JSON Schema, shown to a synthesizer asked in plain text. */
export const REPORT_JSON_SCHEMA = JSON.stringify(jsonSchemaOf(ReportFindings))

/** The line between the answer and the report in a plain-text reply. */
export const REPORT_DELIMITER = "<<<DISAGREEMENT REPORT>>>"

/** The `/models` entry's `supported_parameters` value that says strict JSON Schema output works. */
export const STRUCTURED_OUTPUT_PARAMETER = "structured_outputs"

export interface ReadReply {
  readonly answer: string
  readonly report: Report
}

const decodeReply = Schema.decodeUnknownEither(Schema.parseJson(SynthesisReply))
const decodeFindings = Schema.decodeUnknownEither(Schema.parseJson(ReportFindings))

/** The first problem, short: where it is and what it is. */
const whyNot = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const where = issue === undefined || issue.path.length === 0 ? "" : `at ${issue.path.join(".")}: `
  return stripControl(`${where}${issue?.message ?? "invalid"}`).replace(/\s+/g, " ").slice(0, 200)
}

/** Models often wrap JSON in a Markdown code fence. */
const unfenced = (text: string): string => text.trim().replace(/^```[A-Za-z]*[ \t]*\n/, "").replace(/\n?```$/, "").trim()

/** The JSON object in a text: from its first `{` to its last `}`. */
const objectIn = (text: string): string => {
  const body = unfenced(text)
  const start = body.indexOf("{")
  const end = body.lastIndexOf("}")
  return start >= 0 && end > start ? body.slice(start, end + 1) : body
}

/** "Candidate B" → "B": labels as the manifest's `synthesis.labels` has them. */
const label = (text: string): string => stripControl(text).replace(/^\s*candidate\s+/i, "").trim()

const reportOf = (via: ReportVia, findings: ReportFindings): AvailableReport => ({
  status: "ok",
  via,
  agreements: findings.agreements.map(stripControl),
  contradictions: findings.contradictions.map((c) => ({
    topic: stripControl(c.topic),
    positions: c.positions.map((p) => ({ candidates: p.candidates.map(label), claim: stripControl(p.claim) }))
  })),
  uniqueClaims: findings.uniqueClaims.map((u) => ({ candidate: label(u.candidate), claim: stripControl(u.claim) })),
  confidence: findings.confidence,
  confidenceReason: stripControl(findings.confidenceReason)
})

/**
 * The `answer` string of a JSON reply that broke off (cut by `max_tokens`, say): what was written of it.
 * Undefined when the reply has no `answer` string at all.
 */
export const answerPrefix = (text: string): string | undefined => {
  const start = /"answer"\s*:\s*"/.exec(text)
  if (start === null) return undefined
  const from = start.index + start[0].length
  let end = text.length
  for (let i = from, escaped = false; i < text.length; i++) {
    const ch = text[i]
    if (escaped) escaped = false
    else if (ch === "\\") escaped = true
    else if (ch === "\"") {
      end = i
      break
    }
  }
  // A cut inside an escape sequence leaves it incomplete: drop it.
  const body = text.slice(from, end).replace(/\\(u[0-9a-fA-F]{0,3})?$/, "")
  return Either.getOrUndefined(
    Either.try(() => JSON.parse(`"${body}"`) as unknown).pipe(Either.filterOrLeft((s): s is string => typeof s === "string", () => body))
  )
}

/** A plain-text reply: the answer before the last delimiter line, the report (JSON) after it. */
const readText = (content: string): ReadReply | undefined => {
  const at = content.lastIndexOf(REPORT_DELIMITER)
  if (at < 0) return undefined
  const answer = content.slice(0, at).trimEnd()
  if (answer.trim() === "") return undefined
  const findings = decodeFindings(objectIn(content.slice(at + REPORT_DELIMITER.length)))
  return Either.match(findings, {
    onLeft: (error) => ({ answer, report: unavailableReport(`the report after the answer did not decode (${whyNot(error)})`) }),
    onRight: (found) => ({ answer, report: reportOf("text", found) })
  })
}

/** The answer and the report of a synthesizer's reply, however well or badly it followed the format it was asked for. */
export const readReply = (content: string, via: ReportVia): ReadReply => {
  if (via === "text") {
    return readText(content) ?? { answer: content, report: unavailableReport("the synthesizer wrote no report after its answer") }
  }
  const whole = decodeReply(unfenced(content))
  if (Either.isRight(whole)) {
    const { answer, ...findings } = whole.right
    return answer.trim() === ""
      ? { answer: content, report: unavailableReport("the structured reply's answer was empty") }
      : { answer, report: reportOf("structured", findings) }
  }
  // A provider that ignored `response_format` may have answered in plain text, with or without the delimiter.
  const reason = `the structured reply did not decode (${whyNot(whole.left)})`
  const partial = answerPrefix(content)
  return readText(content) ??
    { answer: partial !== undefined && partial.trim() !== "" ? partial : content, report: unavailableReport(reason) }
}
