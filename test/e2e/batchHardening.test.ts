import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { BatchResult } from "../../src/programs/batchResults.js"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { waitUntil } from "../support/realHttpClient.js"
import { cliEntry, freshDirs, startCli } from "../support/spawnCli.js"

// Issue 13 with two real `batch` processes (item 3) and the batch bullets of items 8 and 10: --out by
// inode, a duplicate id refused at load, the exit code, and a cost the provider did not report.

let fake: FakeOpenRouter
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-batch-hard-"))
const freshDir = freshDirs(tmp)

beforeAll(async () => {
  if (!fs.existsSync(cliEntry)) throw new Error("run npm run build first")
  fake = await startFakeOpenRouter({
    script: {
      "lock/hang": { kind: "hang" },
      // Hangs for the first batch (killed), answers the second.
      "lock/once": [{ kind: "hang" }, { kind: "ok", content: "answered at last" }],
      "ok/one": { kind: "ok", content: "one" },
      "ok/synth": { kind: "ok", content: "synthesized" },
      "free/one": { kind: "ok", content: "no cost", usage: { prompt_tokens: 1, completion_tokens: 1, cost: null } },
      "free/synth": { kind: "ok", content: "no cost either", usage: { prompt_tokens: 1, completion_tokens: 1, cost: null } }
    }
  })
})
afterAll(async () => {
  await fake?.close()
  fs.rmSync(tmp, { recursive: true, force: true })
})

const envFor = (dir: string) => ({
  PATH: process.env.PATH,
  HOME: tmp,
  OPENROUTER_BASE_URL: fake.url,
  PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs"),
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_RETRIES: "0"
})
const readResults = (file: string): Array<BatchResult> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as BatchResult)
const requestsFor = (model: string) => fake.chatRequests().filter((r) => r.model === model).length

describe("two batch processes on one results file", () => {
  it("the second refuses with exit 2, naming the holder, and pays for nothing", async () => {
    const dir = freshDir("refuse")
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "a", prompt: "hang" })}\n`)
    const args = ["batch", input, "-m", "lock/hang", "-s", "ok/synth"]
    const before = requestsFor("lock/hang")
    const first = startCli(args, { env: envFor(dir) })
    await waitUntil(() => requestsFor("lock/hang") > before, "the first batch asking", 30_000)

    const second = await runCliInProcess(args, { env: envFor(dir) })
    expect(second.code).toBe(2)
    expect(second.stderr).toContain(`in use by batch process ${first.child.pid}`)
    expect(second.stderr).toContain("--wait-lock")
    expect(requestsFor("lock/hang")).toBe(before + 1)

    first.child.kill("SIGINT")
    expect((await first.done).code).toBe(130)
    expect(fs.existsSync(`${path.join(dir, "in.results.jsonl")}.lock`)).toBe(false)
  })

  it("with --wait-lock the second waits; a holder killed with -9 leaves a lock that is taken over", async () => {
    const dir = freshDir("wait")
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "a", prompt: "once" })}\n`)
    const args = ["batch", input, "-m", "lock/once", "-s", "ok/synth"]
    const first = startCli(args, { env: envFor(dir) })
    await waitUntil(() => requestsFor("lock/once") >= 1, "the first batch asking", 30_000)

    const second = startCli([...args, "--wait-lock"], { env: envFor(dir) })
    await waitUntil(() => second.stderr().includes("waiting for it"), "the second batch waiting", 30_000)
    expect(requestsFor("lock/once")).toBe(1)
    first.child.kill("SIGKILL")
    await first.done

    const done = await second.done
    expect(done.code, done.stderr).toBe(0)
    expect(done.stderr).toContain("taking it over")
    expect(readResults(path.join(dir, "in.results.jsonl")).at(-1)).toMatchObject({ id: "a", status: "ok" })
  })
})

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
        env: envFor(dir)
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
    const first = await runCliInProcess(args, { env: envFor(dir) })
    expect(first.code).toBe(1)
    const afterFirst = readResults(out)
    expect(afterFirst.filter((r) => r.id === "x").at(-1)).toMatchObject({ status: "ok" })

    fs.writeFileSync(input, [...lines, JSON.stringify({ id: "x", prompt: "again" })].join("\n") + "\n")
    const calls = requestsFor("ok/one")
    const duplicate = await runCliInProcess(args, { env: envFor(dir) })
    expect(duplicate.code).toBe(2)
    expect(duplicate.stderr).toContain(`duplicate id "x" on lines 1 and 3`)
    expect(requestsFor("ok/one")).toBe(calls)
    expect(readResults(out)).toEqual(afterFirst)

    fs.writeFileSync(input, lines.join("\n") + "\n")
    const again = await runCliInProcess(args, { env: envFor(dir) })
    expect(again.code).toBe(1)
    expect(readResults(out)).toEqual(afterFirst)
  })

  it("prints a cost the provider did not report as unknown, not $0.0000", async () => {
    const dir = freshDir("cost")
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "f", prompt: "free" })}\n`)
    const result = await runCliInProcess(["batch", input, "-m", "free/one", "-s", "free/synth"], { env: envFor(dir) })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain("cost unknown")
    expect(result.stderr).not.toContain("$0.0000")
  })
})
