import { it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect } from "vitest"
import { plotPoints, renderPlot } from "../../src/programs/eval/plot.js"
import type { EvalReport, StrategyRow } from "../../src/programs/eval/report.js"
import { accuracyOf } from "../../src/programs/eval/stats.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { itLive } from "../support/itLive.js"
import { pointsOf, textsOf } from "../support/svgMarks.js"
import { makeTempDirs } from "../support/tempDirs.js"

// `eval --plot FILE.svg`: the chart opened as a reader would, its points, axes and labels read back from the
// SVG Vega wrote (the built CLI, whose bundle loads Vega from a file of its own: test/e2e/evalPlot.test.ts).

const free = { cost: 0, tokens: { prompt: 0, completion: 0 }, latencyMs: null } as const
const strategy = (name: string, correct: number, cost: number, unknownCost = 0): StrategyRow => ({
  strategy: name,
  ...accuracyOf(correct, 20),
  runs: { ok: 20, partial: 0, failed: 0, cancelled: 0 },
  cost,
  unknownCost,
  costPerCorrect: null,
  tokens: { prompt: 0, completion: 0 },
  latencyMs: { mean: null, median: null }
})
const report: EvalReport = {
  dataset: "my <b>set</b>\u001b[31m",
  scorer: "numeric",
  items: 20,
  baselines: {
    items: 20,
    candidates: [],
    bestSingle: { model: "m/<best>", ...accuracyOf(12, 20), ...free },
    majority: { tiePolicy: "best-single", ...accuracyOf(11, 20), ...free },
    majorityFirstInLine: { tiePolicy: "first-in-line", ...accuracyOf(9, 20), ...free },
    tied: 3,
    oracle: { ...accuracyOf(16, 20), ...free }
  },
  strategies: [strategy("synthesize", 15, 0.2), strategy("rank", 14, 0.6, 2)]
}

describe("eval --plot", () => {
  it("has one point per baseline and strategy, placed by cost and accuracy", () => {
    const points = plotPoints(report)
    expect(points.map((p) => [p.name, p.kind, p.costPerItem])).toEqual([
      ["best single (m/<best>)", "baseline", 0],
      ["majority vote", "baseline", 0],
      ["oracle", "baseline", 0],
      ["synthesize", "strategy", 0.01],
      ["rank (cost partly unknown)", "strategy", 0.03]
    ])
    expect(points[3]).toMatchObject({ accuracy: 0.75, low: accuracyOf(15, 20).interval[0], high: accuracyOf(15, 20).interval[1] })
  })

  itLive.effect("draws them as an SVG with axes, labels and intervals, its texts escaped", () =>
    Effect.gen(function*() {
      const svg = yield* renderPlot(report, "plot.svg")
      expect(svg.startsWith("<svg")).toBe(true)
      const points = pointsOf(svg)
      expect(points).toHaveLength(5)
      // Dearer further right, more accurate higher up (SVG's y grows downwards); the free baselines share x.
      const [best, vote, oracle, synth, rank] = points
      expect(new Set([best!.x, vote!.x, oracle!.x]).size).toBe(1)
      expect(best!.x).toBeLessThan(synth!.x)
      expect(synth!.x).toBeLessThan(rank!.x)
      expect(oracle!.y).toBeLessThan(best!.y)
      expect(synth!.y).toBeLessThan(best!.y)
      expect(oracle!.y).toBeLessThan(synth!.y)
      // One interval rule per point.
      expect([...svg.matchAll(/aria-roledescription="rule mark"/g)]).toHaveLength(5)
      const texts = textsOf(svg)
      expect(texts).toEqual(expect.arrayContaining([
        "cost per item (USD)",
        "accuracy (95 % Wilson interval)",
        "best single (m/&lt;best&gt;)",
        "synthesize",
        "rank (cost partly unknown)",
        "oracle",
        "0%",
        "100%",
        "my &lt;b&gt;set&lt;/b&gt;[31m: accuracy against cost"
      ]))
      // No markup from a name, no control character.
      expect(svg).not.toContain("<b>")
      expect(svg).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/)
    }))
})

describe("eval --plot, refused", () => {
  const tempDir = makeTempDirs("pllm-plot-")

  it("refuses the dataset as its target", async () => {
    const tmp = tempDir()
    const env = { PATH: process.env.PATH, HOME: tmp }
    const dataset = path.join(tmp, "set.jsonl")
    fs.writeFileSync(dataset, `${JSON.stringify({ question: "1+1?", answer: "2", candidates: { a: "2", b: "3" } })}\n`)
    // A refusal before any plotting: no process needed.
    const refused = await runCliInProcess(["eval", dataset, "--baselines-only", "--plot", dataset], { env, cwd: tmp })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("--plot must not be the dataset file")
    expect(fs.readFileSync(dataset, "utf8")).toContain("1+1?")
  })
})
