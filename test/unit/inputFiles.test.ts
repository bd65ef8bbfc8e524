import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { makeTempDirs } from "../support/tempDirs.js"

// The files a command reads besides its settings (a batch's prompts and results, an eval dataset) come from the
// user: opened once and checked as opened, so a FIFO or a device in their place is refused at once, not waited on.

const tempDir = makeTempDirs("pllm-inputs-")

const envFor = (dir: string) => ({
  PATH: process.env.PATH,
  HOME: dir,
  OPENROUTER_API_KEY: "sk-test-inputs-0123456789",
  OPENROUTER_BASE_URL: "http://127.0.0.1:9/api/v1",
  PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs")
})

describe("input files that are not regular files", () => {
  it("batch: a FIFO as the prompts file, or as the results file, is refused at once (exit 2), nothing asked", async () => {
    const dir = tempDir()
    const fifo = path.join(dir, "prompts.jsonl")
    execFileSync("mkfifo", [fifo])
    const input = await runCliInProcess(["batch", fifo], { env: envFor(dir), timeoutMs: 20_000 })
    expect(input.code).toBe(2)
    expect(input.stderr).toContain(`cannot read ${fifo}: not a regular file`)

    const prompts = path.join(dir, "ok.jsonl")
    fs.writeFileSync(prompts, `{"prompt":"hi"}\n`)
    const results = path.join(dir, "results.jsonl")
    execFileSync("mkfifo", [results])
    const output = await runCliInProcess(["batch", prompts, "--out", results], { env: envFor(dir), timeoutMs: 20_000 })
    expect(output.code).toBe(2)
    expect(output.stderr).toContain(`cannot read the results file ${results}: not a regular file`)
  })

  it("ask --file: a FIFO is refused at once (exit 2), nothing asked", async () => {
    const dir = tempDir()
    const fifo = path.join(dir, "prompt.txt")
    execFileSync("mkfifo", [fifo])
    const result = await runCliInProcess(["ask", "--file", fifo], { env: envFor(dir), timeoutMs: 20_000 })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`--file: cannot read ${fifo}: not a regular file`)
  })

  it("eval: a FIFO or /dev/zero as the dataset, or a FIFO as its results file, is refused at once (exit 2)", async () => {
    const dir = tempDir()
    const fifo = path.join(dir, "data.jsonl")
    execFileSync("mkfifo", [fifo])
    const fromFifo = await runCliInProcess(["eval", "--dataset", fifo, "--baselines-only"], { env: envFor(dir), timeoutMs: 20_000 })
    expect(fromFifo.code).toBe(2)
    expect(fromFifo.stderr).toContain(`cannot read the dataset ${fifo}: not a regular file`)
    const fromDevice = await runCliInProcess(["eval", "--dataset", "/dev/zero", "--baselines-only"], {
      env: envFor(dir),
      timeoutMs: 20_000
    })
    expect(fromDevice.code).toBe(2)
    expect(fromDevice.stderr).toContain("cannot read the dataset /dev/zero: not a regular file")

    const dataset = path.join(dir, "q.jsonl")
    fs.writeFileSync(dataset, `{"id":"a","question":"2+2?","answer":"4"}\n`)
    const results = path.join(dir, "q.eval.jsonl")
    execFileSync("mkfifo", [results])
    const toFifo = await runCliInProcess(["eval", dataset, "-m", "a/one", "-s", "a/s"], { env: envFor(dir), timeoutMs: 20_000 })
    expect(toFifo.code).toBe(2)
    expect(toFifo.stderr).toContain(`cannot read the results file ${results}: not a regular file`)
  })
})
