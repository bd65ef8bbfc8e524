import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { ensureBuilt, repoRoot, runCli, startCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"

// `eval` where a process is the point: the converter script, which reads the build, and a second eval process on
// a results file the first one holds. The rest of `eval` runs in-process in test/unit/evalCli.test.ts.

let fake: FakeOpenRouter
const { root: tmp, freshDir } = tempRoot("pllm-eval-")

beforeAll(async () => {
  ensureBuilt()
  fake = await startFakeOpenRouter({
    script: { "ev/hang": { kind: "hang" } }
  })
})

afterAll(async () => {
  await fake?.close()
})

const envFor = (outputDir: string) => fakeCliEnv(fake.url, { home: tmp, outputDir })

describe("the GSM8K converter script (it reads the build)", () => {
  it("the converter script turns upstream GSM8K lines into an eval dataset that scores the same as the built-in one", async () => {
    const dir = freshDir("convert")
    const upstream = path.join(dir, "upstream.jsonl")
    const lines = fs.readFileSync(path.join(repoRoot, "data", "gsm8k-frozen-candidates.jsonl"), "utf8").split("\n").slice(0, 20)
    fs.writeFileSync(upstream, `${lines.join("\n")}\n`)
    const converted = path.join(dir, "gsm8k-20.jsonl")
    fs.writeFileSync(
      converted,
      execFileSync(process.execPath, [path.join(repoRoot, "scripts", "gsm8k-to-eval.mjs"), upstream], { encoding: "utf8" })
    )
    expect(Object.keys(JSON.parse(fs.readFileSync(converted, "utf8").split("\n")[0]!))).toEqual(["question", "answer", "candidates"])

    const env = { PATH: process.env.PATH, HOME: tmp }
    const [fromFile, builtin] = await Promise.all([
      runCli(["eval", converted, "--baselines-only", "--json"], { env }),
      runCli(["eval", "--dataset", "gsm8k", "--limit", "20", "--baselines-only", "--json"], { env })
    ])
    expect(fromFile.code, fromFile.stderr).toBe(0)
    expect(JSON.parse(fromFile.stdout).baselines).toEqual(JSON.parse(builtin.stdout).baselines)
  })
})

describe("parallel-llm eval, two processes", () => {
  it("one process per results file: a second eval on it is refused while the first runs", async () => {
    const dir = freshDir("lock")
    const file = path.join(dir, "one.jsonl")
    fs.writeFileSync(file, `${JSON.stringify({ question: "q", answer: "1", candidates: { a: "A: 1" } })}\n`)
    const args = ["eval", file, "-s", "ev/hang"]
    const env = envFor(path.join(dir, "runs"))
    const first = startCli(args, { env })
    const lock = path.join(dir, "one.eval.jsonl.lock")
    await vi.waitFor(() => expect(fs.existsSync(lock)).toBe(true), { timeout: 30_000, interval: 50 })
    const second = await runCli(args, { env })
    expect(second.code).toBe(2)
    expect(second.stderr).toContain(`${path.join(dir, "one.eval.jsonl")} is in use by`)
    first.child.kill("SIGINT")
    expect((await first.done).code).toBe(130)
    expect(fs.existsSync(lock)).toBe(false)
  })
})
