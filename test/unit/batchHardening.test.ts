import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import type { BatchResult } from "../../src/programs/batchResults.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 13, the batch bullets of items 8 and 10, in-process: --out by inode, a duplicate id refused at load, the
// exit code, and a cost the provider did not report. Two real `batch` processes (item 3) are
// test/e2e/batchHardening.test.ts's.

const { freshDir } = tempRoot("pllm-batch-hard-")
const provider = withFakeProvider({
  script: {
    "ok/one": { kind: "ok", content: "one" },
    "ok/synth": { kind: "ok", content: "synthesized" },
    "free/one": { kind: "ok", content: "no cost", usage: { prompt_tokens: 1, completion_tokens: 1, cost: null } },
    "free/synth": { kind: "ok", content: "no cost either", usage: { prompt_tokens: 1, completion_tokens: 1, cost: null } }
  }
})
const readResults = (file: string): Array<BatchResult> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as BatchResult)
const requestsFor = (model: string) => provider.fake.chatRequests().filter((r) => r.model === model).length

describe("batch --out", () => {
  it("refuses a symlink or a hard link to the input", async () => {
    const dir = freshDir("out")
    const input = path.join(dir, "in.jsonl")
    const text = `${JSON.stringify({ prompt: "x" })}\n`
    fs.writeFileSync(input, text)
    fs.symlinkSync(input, path.join(dir, "soft.jsonl"))
    fs.linkSync(input, path.join(dir, "hard.jsonl"))
    for (const out of ["soft.jsonl", "hard.jsonl"]) {
      const result = await runCliInProcess(["batch", input, "--out", path.join(dir, out), "-m", "ok/one", "-s", "ok/synth"], {
        env: provider.cliEnv(dir)
      })
      expect(result.code, out).toBe(2)
      expect(result.stderr).toContain("--out must not be the input file")
    }
    expect(fs.readFileSync(input, "utf8")).toBe(text)
  })
})

describe("batch results across passes", () => {
  it("a duplicate id added later is refused with its line numbers before any call, and bad lines are reported once", async () => {
    const dir = freshDir("dup")
    const input = path.join(dir, "in.jsonl")
    const lines = [JSON.stringify({ id: "x", prompt: "first" }), "not json"]
    fs.writeFileSync(input, lines.join("\n") + "\n")
    const args = ["batch", input, "-m", "ok/one", "-s", "ok/synth"]
    const out = path.join(dir, "in.results.jsonl")
    const first = await runCliInProcess(args, { env: provider.cliEnv(dir) })
    expect(first.code).toBe(1)
    const afterFirst = readResults(out)
    expect(afterFirst.filter((r) => r.id === "x").at(-1)).toMatchObject({ status: "ok" })

    fs.writeFileSync(input, [...lines, JSON.stringify({ id: "x", prompt: "again" })].join("\n") + "\n")
    const calls = requestsFor("ok/one")
    const duplicate = await runCliInProcess(args, { env: provider.cliEnv(dir) })
    expect(duplicate.code).toBe(2)
    expect(duplicate.stderr).toContain(`duplicate id "x" on lines 1 and 3`)
    expect(requestsFor("ok/one")).toBe(calls)
    expect(readResults(out)).toEqual(afterFirst)

    fs.writeFileSync(input, lines.join("\n") + "\n")
    const again = await runCliInProcess(args, { env: provider.cliEnv(dir) })
    expect(again.code).toBe(1)
    expect(readResults(out)).toEqual(afterFirst)
  })

  it("prints a cost the provider did not report as unknown, not $0.0000", async () => {
    const dir = freshDir("cost")
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "f", prompt: "free" })}\n`)
    const result = await runCliInProcess(["batch", input, "-m", "free/one", "-s", "free/synth"], { env: provider.cliEnv(dir) })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain("cost unknown")
    expect(result.stderr).not.toContain("$0.0000")
  })
})
