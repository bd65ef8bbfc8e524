import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { cliEntry, repoRoot, runCli } from "../support/spawnCli.js"
import { pointsOf, textsOf } from "../support/svgMarks.js"

// `eval --plot` through the built CLI: its bundle loads Vega from a file of its own (dist/plot.cjs), which only a
// process running the bundle exercises.

describe("eval --plot through the built CLI", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-plot-"))
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  it("writes the chart of the baselines from the bundle's own plotting file, and refuses the dataset as its target", async () => {
    if (!fs.existsSync(cliEntry)) execFileSync("npm", ["run", "build"], { cwd: repoRoot, stdio: "ignore" })
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

    const dataset = path.join(tmp, "set.jsonl")
    fs.writeFileSync(dataset, `${JSON.stringify({ question: "1+1?", answer: "2", candidates: { a: "2", b: "3" } })}\n`)
    // A refusal before any plotting: no process needed.
    const refused = await runCliInProcess(["eval", dataset, "--baselines-only", "--plot", dataset], { env, cwd: tmp })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("--plot must not be the dataset file")
    expect(fs.readFileSync(dataset, "utf8")).toContain("1+1?")
  })
})
