import { describe, expect, it } from "vitest"
import type { EvalResult } from "../../src/programs/eval/evalResults.js"
import { markdownReport, pairedRows, strategyRows } from "../../src/programs/eval/report.js"

const result = (id: string, cost: number | null, runDir: string | null = `/runs/${id}`): EvalResult => ({
  id,
  line: 1,
  strategy: "synthesize",
  fingerprint: "f",
  runDir,
  status: runDir === null ? "failed" : "ok",
  scorer: "number",
  answer: "1",
  correct: runDir !== null,
  cost,
  promptTokens: 10,
  completionTokens: 5,
  durationMs: 1000
})

const tableRow = (results: ReadonlyArray<EvalResult>) => {
  const report = markdownReport({
    dataset: "d.jsonl",
    scorer: "number",
    items: results.length,
    baselines: null,
    strategies: strategyRows(["synthesize"], results, results.length)
  })
  return report.split("\n").find((line) => line.startsWith("| synthesize"))
}

describe("the eval report's cost", () => {
  it("sums the costs the provider reported, and says when some runs reported none instead of counting them as $0", () => {
    const rows = strategyRows(["synthesize"], [result("a", 0.002), result("b", null), result("c", 0.001)], 3)
    expect(rows[0]).toMatchObject({ cost: 0.003, unknownCost: 1 })
    expect(tableRow([result("a", 0.002), result("b", null)])).toContain("| $0.0020 + unknown |")
    expect(tableRow([result("a", null), result("b", null)])).toContain("| unknown |")
    expect(tableRow([result("a", 0.002), result("b", 0.001)])).toContain("| $0.0030 |")
  })

  it("counts a line that never ran (no run directory) as nothing paid, not as unknown", () => {
    expect(strategyRows(["synthesize"], [result("a", 0.002), result("b", null, null)], 2)[0]).toMatchObject({ unknownCost: 0 })
  })
})

describe("the eval report's cost per correct answer", () => {
  it("divides the cost by the correct answers, and gives none when nothing is right or a cost is unknown", () => {
    const wrong = { ...result("c", 0.003), correct: false }
    expect(strategyRows(["synthesize"], [result("a", 0.002), result("b", 0.001), wrong], 3)[0]?.costPerCorrect).toBeCloseTo(0.003, 10)
    expect(strategyRows(["synthesize"], [wrong], 1)[0]?.costPerCorrect).toBeNull()
    expect(strategyRows(["synthesize"], [result("a", 0.002), result("b", null)], 2)[0]?.costPerCorrect).toBeNull()
    expect(tableRow([result("a", 0.002), result("b", 0.004)])).toContain("| $0.0060 | $0.0030 |")
    expect(tableRow([{ ...result("a", 0.002), correct: false }])).toContain("| $0.0020 | — |")
  })
})

describe("the eval report's paired comparison", () => {
  const verdict = (id: string, bestSingle: boolean, majority: boolean) => ({
    id,
    bestSingle,
    majority,
    majorityFirstInLine: majority,
    tied: false,
    oracle: bestSingle || majority
  })

  it("counts only the items with frozen candidates, an item without a result as wrong, and prints W/L/T with p", () => {
    // 13 items: the strategy is right on q0…q9; the best single on q10 only; the vote on q0 and q10.
    const baselines = {
      bestSingle: "m|1",
      items: Array.from({ length: 13 }, (_, i) => verdict(`q${i}`, i === 10, i === 0 || i === 10))
    }
    const results = [
      ...Array.from({ length: 10 }, (_, i) => result(`q${i}`, 0.001)),
      { ...result("q10", 0.001), correct: false },
      // q11 and q12 have no result; "extra" has no frozen candidates (it is not in the baselines).
      result("extra", 0.001)
    ]
    const paired = pairedRows(["synthesize"], results, baselines)
    // Against the best single: W 10 (q0…q9), L 1 (q10), T 2 (q11, q12) → p = 2·(1 + 11)/2^11.
    // Against the vote: W 9, L 1, T 3 → p = 2·(1 + 10)/2^10 = 0.021484375.
    expect(paired).toEqual([{
      strategy: "synthesize",
      items: 13,
      bestSingle: { model: "m|1", wins: 10, losses: 1, ties: 2, p: expect.closeTo(24 / 2048, 15) },
      majority: { wins: 9, losses: 1, ties: 3, p: expect.closeTo(0.021484375, 15) }
    }])
    const table = markdownReport({ dataset: "d", scorer: "numeric", items: 14, baselines: null, strategies: [], paired })
    expect(table).toContain("| paired | vs best single (m\\|1) W/L/T | p | vs majority vote W/L/T | p |")
    expect(table).toContain("| synthesize | 10/1/2 | 0.0117 | 9/1/3 | 0.0215 |")
    expect(table).toContain("Paired, on the 13 items with frozen candidates")
  })

  it("is absent without frozen candidates, and writes a tiny p as a power of ten", () => {
    expect(pairedRows(["synthesize"], [result("a", 0.001)], undefined)).toBeUndefined()
    const baselines = { bestSingle: "m", items: Array.from({ length: 20 }, (_, i) => verdict(`q${i}`, false, false)) }
    const paired = pairedRows(["synthesize"], Array.from({ length: 20 }, (_, i) => result(`q${i}`, 0.001)), baselines)
    // 20 wins, 0 losses: p = 2/2^20.
    expect(paired?.[0]?.bestSingle.p).toBeCloseTo(2 / 2 ** 20, 18)
    const table = markdownReport({ dataset: "d", scorer: "numeric", items: 20, baselines: null, strategies: [], paired })
    expect(table).toContain("| synthesize | 20/0/0 | 1.9e-6 | 20/0/0 | 1.9e-6 |")
  })
})
