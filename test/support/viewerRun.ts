import { REPORT_DELIMITER } from "../../src/programs/synthesisReply.js"

// What the viewer's browser tests have the loopback synthesizer say: a Markdown answer and a report with a
// contradiction (who says what) and a lone claim, so that every part of the page has something to show.

export const MERGED_ANSWER = "# Merged\n\nThe answer is **4**, as both agree."

export const FINDINGS = {
  agreements: ["2 + 2 = 4"],
  contradictions: [{ topic: "the unit", positions: [{ candidates: ["A"], claim: "none" }, { candidates: ["B"], claim: "apples" }] }],
  uniqueClaims: [{ candidate: "B", claim: "apples are red" }],
  confidence: "medium",
  confidenceReason: "One candidate adds a unit."
}

/** A synthesizer's reply in the default (text) report form: the answer, the delimiter, the report as JSON. */
export const synthesizerReply = (answer: string, findings: object): string =>
  `${answer}\n\n${REPORT_DELIMITER}\n${JSON.stringify(findings)}`
