import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { FIGURES } from "../bench/figures.js"
import { cliEntry, repoRoot } from "./support/spawnCli.js"

// The bench only has to run: BENCH_QUICK=1 does each measurement a few times on a small batch, and
// the JSON must hold every figure. The figures themselves are never asserted (the machine decides them).

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-bench-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

describe("npm run bench (quick mode)", () => {
  it("runs and writes every figure to the JSON file", async () => {
    if (!fs.existsSync(cliEntry)) execFileSync("npm", ["run", "build"], { cwd: repoRoot, stdio: "ignore" })
    const out = path.join(tmp, "latest.json")
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot, "bench", "run.mjs")], {
      cwd: repoRoot,
      env: { ...process.env, BENCH_QUICK: "1", BENCH_OUT: out },
      timeout: 400_000,
      maxBuffer: 16 * 1024 * 1024
    })
    const report = JSON.parse(fs.readFileSync(out, "utf8")) as { mode: string; figures: Record<string, unknown> }
    expect(report.mode).toBe("quick")
    for (const { key } of FIGURES) {
      expect(typeof report.figures[key], key).toBe("number")
      expect(Number.isFinite(report.figures[key]), key).toBe(true)
    }
    // The table names every figure too.
    for (const { label } of FIGURES) expect(stdout).toContain(label.trim())
  }, 420_000)
})
