import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { finalNumber, scorers } from "../../src/programs/eval/scorers.js"

// The numeric scorer against a fixture of tricky responses, written from the formats people use and the
// conventions of common evaluation harnesses (lm-evaluation-harness's GSM8K `#### ` and flexible-extract,
// simple-evals' `Answer:`, MATH's `\boxed{}`): each line is a response, the dataset's answer, the final number
// the scorer must read (null: none, e.g. a range), and whether the response is right. It must agree entirely.

interface Case {
  readonly response: string
  readonly answer: string
  readonly expected: number | null
  readonly correct: boolean
}

const cases = fs.readFileSync(path.join(__dirname, "..", "fixtures", "scorer-cases.jsonl"), "utf8")
  .split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Case)

describe("the numeric scorer's fixture", () => {
  it("holds at least 200 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(200)
  })

  it("reads every response's final number and scores it as the fixture says", () => {
    const disagreements = cases.flatMap((c, i) => {
      const read = finalNumber(c.response) ?? null
      const value = read === null || c.expected === null ? read === c.expected : Math.abs(read - c.expected) <= 1e-9
      const correct = scorers.numeric.correct(c.response, c.answer)
      return value && correct === c.correct ? [] : [{ line: i + 1, ...c, read, scored: correct }]
    })
    expect(disagreements).toEqual([])
  })
})
