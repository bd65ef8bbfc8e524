import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ensureBuilt, runCli } from "../support/spawnCli.js"
import { pointsOf, textsOf } from "../support/svgMarks.js"

// `eval --plot` through the built CLI: its bundle loads Vega from a file of its own (dist/plot.cjs), which only a
// process running the bundle exercises. Refusing the dataset as its target is test/unit/evalPlot.test.ts's.

describe("eval --plot through the built CLI", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-plot-"))
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  it("writes the chart of the baselines from the bundle's own plotting file", async () => {
    ensureBuilt()
    const env = { PATH: process.env.PATH, HOME: tmp }
    const file = path.join(tmp, "chart.svg")
    const done = await runCli(["eval", "--dataset", "gsm8k", "--baselines-only", "--limit", "40", "--plot", file], { env, cwd: tmp })
    expect(done.stderr).toBe("")
    expect(done.code).toBe(0)
    expect(done.stdout).toContain("oracle")
    const svg = fs.readFileSync(file, "utf8")
    expect(pointsOf(svg)).toHaveLength(3)
    expect(textsOf(svg)).toEqual(expect.arrayContaining(["gsm8k: accuracy against cost", "majority vote", "cost per item (USD)"]))
    expect(fs.readdirSync(tmp).filter((f) => f.endsWith(".tmp"))).toEqual([])
  })
})
