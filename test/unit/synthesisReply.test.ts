import { describe, expect, it } from "vitest"
import { answerPrefix, readReply, REPORT_DELIMITER, SYNTHESIS_REPLY_FORMAT } from "../../src/programs/synthesisReply.js"

// The synthesizer's reply read into its answer and its report: the structured JSON, the plain-text
// fallback after the delimiter, and every way a reply can be broken without losing the answer.

const FINDINGS = {
  agreements: ["2 + 2 = 4"],
  contradictions: [{
    topic: "the unit",
    positions: [{ candidates: ["A"], claim: "none" }, { candidates: ["Candidate B", "C"], claim: "apples\u001b[2J" }]
  }],
  uniqueClaims: [{ candidate: "candidate c", claim: "apples are red" }],
  confidence: "high",
  confidenceReason: "Every candidate got 4."
}
const EXPECTED = {
  agreements: ["2 + 2 = 4"],
  contradictions: [{
    topic: "the unit",
    positions: [{ candidates: ["A"], claim: "none" }, { candidates: ["B", "C"], claim: "apples[2J" }]
  }],
  uniqueClaims: [{ candidate: "c", claim: "apples are red" }],
  confidence: "high",
  confidenceReason: "Every candidate got 4."
}
const ANSWER = "# Sum\n\nIt is **4**."

describe("readReply", () => {
  it("decodes a structured reply: the answer field, and the report with labels normalised and control characters gone", () => {
    const reply = readReply(JSON.stringify({ answer: ANSWER, ...FINDINGS }), "structured")
    expect(reply).toEqual({ answer: ANSWER, report: { status: "ok", via: "structured", ...EXPECTED } })
  })

  it("accepts a structured reply wrapped in a code fence", () => {
    const reply = readReply(`\`\`\`json\n${JSON.stringify({ answer: ANSWER, ...FINDINGS })}\n\`\`\``, "structured")
    expect(reply.answer).toBe(ANSWER)
    expect(reply.report.status).toBe("ok")
  })

  it("reads the plain-text fallback: the answer before the delimiter, the report's JSON after it", () => {
    const content = `${ANSWER}\n\n${REPORT_DELIMITER}\n\`\`\`json\n${JSON.stringify(FINDINGS, null, 2)}\n\`\`\`\n`
    expect(readReply(content, "text")).toEqual({ answer: ANSWER, report: { status: "ok", via: "text", ...EXPECTED } })
  })

  it("a structured request answered in plain text (a provider that ignored the format) is read as text", () => {
    const content = `${ANSWER}\n${REPORT_DELIMITER}\n${JSON.stringify(FINDINGS)}`
    expect(readReply(content, "structured")).toEqual({ answer: ANSWER, report: { status: "ok", via: "text", ...EXPECTED } })
    expect(readReply(ANSWER, "structured")).toMatchObject({ answer: ANSWER, report: { status: "unavailable" } })
  })

  it("a plain-text reply without the delimiter is all answer; the report is unavailable", () => {
    expect(readReply(ANSWER, "text")).toEqual({
      answer: ANSWER,
      report: { status: "unavailable", reason: "the synthesizer wrote no report after its answer" }
    })
  })

  it("a report that does not decode is unavailable with the reason; the answer is kept", () => {
    const bad = readReply(`${ANSWER}\n${REPORT_DELIMITER}\n{"agreements": "all of it"}`, "text")
    expect(bad.answer).toBe(ANSWER)
    expect(bad.report.status).toBe("unavailable")
    if (bad.report.status === "unavailable") {
      expect(bad.report.reason).toMatch(/^the report after the answer did not decode \(at agreements: /)
    }
    const wrongConfidence = readReply(JSON.stringify({ answer: ANSWER, ...FINDINGS, confidence: "certain" }), "structured")
    expect(wrongConfidence.answer).toBe(ANSWER)
    expect(wrongConfidence.report).toMatchObject({ status: "unavailable", reason: expect.stringMatching(/did not decode \(at confidence/) })
  })

  it("a structured reply cut short keeps what was written of the answer, escapes decoded", () => {
    const cut = `{"answer": "Line one\\nLine \\"two\\" \\u00e9t\\u00`
    expect(answerPrefix(cut)).toBe("Line one\nLine \"two\" ét")
    const reply = readReply(cut, "structured")
    expect(reply.answer).toBe("Line one\nLine \"two\" ét")
    expect(reply.report).toMatchObject({ status: "unavailable", reason: expect.stringContaining("the structured reply did not decode") })
  })

  it("an empty structured answer keeps the whole reply as the answer rather than an empty final.md", () => {
    const content = JSON.stringify({ answer: " ", ...FINDINGS })
    expect(readReply(content, "structured")).toEqual({
      answer: content,
      report: { status: "unavailable", reason: "the structured reply's answer was empty" }
    })
  })
})

describe("the response format", () => {
  it("is the strict JSON Schema generated from the Schema: answer first, no $schema key, no extra properties", () => {
    const schema = SYNTHESIS_REPLY_FORMAT.schema as { type: string; required: Array<string>; additionalProperties: boolean }
    expect(SYNTHESIS_REPLY_FORMAT.name).toBe("synthesis")
    expect(schema).not.toHaveProperty("$schema")
    expect(schema.type).toBe("object")
    expect(schema.additionalProperties).toBe(false)
    expect(schema.required).toEqual(["answer", "agreements", "contradictions", "uniqueClaims", "confidence", "confidenceReason"])
  })
})
