import { describe, expect, it } from "vitest"
import { markdownReport, strategyRows } from "../src/programs/eval/report.js"
import type { EvalResult } from "../src/programs/eval/runEval.js"

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
