import type { Manifest } from "./manifest.js"

// The disagreement report as a person reads it (Markdown, for `ask --report`, `resynth --report`,
// `runs show --report`). The caller strips control characters on the way out, as for the answer.

const flat = (text: string): string => text.replace(/\s+/g, " ").trim()

const listOf = (items: ReadonlyArray<string>): ReadonlyArray<string> => (items.length === 0 ? ["- none"] : items.map((i) => `- ${i}`))

/** The report of a run, candidates named by label and model. */
export const formatReport = ({ report, synthesis }: Pick<Manifest, "report" | "synthesis">): string => {
  const heading = "## Disagreement report"
  if (report === undefined) return `${heading}\n\nNone: this run has no report.`
  if (report.status === "unavailable") return `${heading}\n\nUnavailable: ${flat(report.reason)}.`
  const models = new Map((synthesis?.labels ?? []).map(({ label, model }) => [label, model] as const))
  const who = (label: string) => {
    const model = models.get(label)
    return model === undefined ? flat(label) : `${flat(label)} (${model})`
  }
  return [
    heading,
    "",
    `Confidence: ${report.confidence}. ${flat(report.confidenceReason)}`,
    "",
    "### All candidates agree",
    ...listOf(report.agreements.map(flat)),
    "",
    "### Contradictions",
    ...(report.contradictions.length === 0 ? ["- none"] : report.contradictions.flatMap((c) => [
      `- ${flat(c.topic)}`,
      ...c.positions.map((p) => `  - ${p.candidates.map(who).join(", ")}: ${flat(p.claim)}`)
    ])),
    "",
    "### Said by one candidate only",
    ...listOf(report.uniqueClaims.map((u) => `${who(u.candidate)}: ${flat(u.claim)}`))
  ].join("\n")
}
