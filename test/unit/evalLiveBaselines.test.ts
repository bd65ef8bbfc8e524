import { Effect, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import type { ModelRequest } from "../../src/domain/modelCall.js"
import { cliEffect } from "../support/inProcessCli.js"
import { makeScriptedClient, type ScriptedClient, type Step } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"

// Issue 25, item 4: with candidates asked rather than frozen, their own answers are scored too, so best single,
// vote and oracle rows exist for any dataset, and the paired test compares each strategy with the best single
// candidate. The case that went unseen: every candidate right, the synthesis wrong.
// The command lines run in-process over a scripted model client (priced as the loopback fake prices a call,
// $0.0001): the baselines are the point here, and eval's calls over HTTP are evalCli.test.ts's (a paid eval
// against the loopback fake, resumed without a request).

const tempDir = makeTempDirs("pllm-live-baselines-")

/** An answer as the fake's default usage bills it. */
const says = (answer: string): Step => ({ answer, cost: 0.0001 })

/** The command line's environment: its home and runs under `dir`, no fallback synthesizer, no retry. */
const envOf = (dir: string, extra: Record<string, string> = {}) => ({
  PATH: process.env["PATH"],
  HOME: dir,
  // Nothing listens there: the scripted client answers every call.
  OPENROUTER_BASE_URL: "http://127.0.0.1:9/v1",
  PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs"),
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_RETRIES: "0",
  ...extra
})

/** `parallel-llm ...args` in-process over `client` (its script's counters go on from one command line to the next). */
const run = (client: ScriptedClient, args: ReadonlyArray<string>, env: ReturnType<typeof envOf>) =>
  Effect.runPromise(cliEffect(args, { env, overrides: client.layer, timeoutMs: 45_000 }))

const requests = (client: ScriptedClient): Promise<ReadonlyArray<ModelRequest>> => Effect.runPromise(Ref.get(client.requests))

// lv/right is right on every item; lv/half only on the first two; the synthesizer is always wrong.
const liveScript = () =>
  Effect.runPromise(makeScriptedClient({
    "lv/right": [says("#### 4")],
    "lv/half": [says("#### 4"), says("#### 4"), says("#### 5")],
    "lv/synth": [says("#### 7")]
  }))

const dataset = (dir: string) => {
  const file = path.join(dir, "live.jsonl")
  const lines = ["q1", "q2", "q3"].map((id) => JSON.stringify({ id, question: `What is 2+2? (${id})`, answer: "4" }))
  fs.writeFileSync(file, `${lines.join("\n")}\n`)
  return file
}

describe("eval over asked candidates", () => {
  it("scores the candidates' own answers: best single, vote and oracle rows, and the paired test against the best candidate", async () => {
    const client = await liveScript()
    const dir = tempDir()
    const file = dataset(dir)
    const args = ["eval", file, "-m", "lv/right", "-m", "lv/half", "-s", "lv/synth", "--runs", "1"]
    const r = await run(client, args, envOf(dir))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^\| best single \(lv\/right\) \| 100\.0 % \| .* \| 3\/3 \| — \|/m)
    // Item 3 is tied 1-1: the tie goes to the best single candidate's answer, right.
    expect(r.stdout).toMatch(/^\| majority vote \(tie → best single's answer\) \| 100\.0 % \| .* \| 3\/3 \|/m)
    expect(r.stdout).toMatch(/^\| majority vote \(tie → first in line\) \| 100\.0 % \|/m)
    expect(r.stdout).toMatch(/^\| oracle \(any candidate right\) \| 100\.0 % \|/m)
    expect(r.stdout).toMatch(/^\| synthesize \(lv\/synth\) \| 0\.0 % \|/m)
    expect(r.stdout).toContain("Candidates alone: lv/right 100.0 %, lv/half 66.7 %.")
    expect(r.stdout).toContain("Tied votes: 1 of 3 items")
    // Against the best candidate: 0 wins, 3 losses, p = 2·(1/2)^3 = 0.25.
    expect(r.stdout).toMatch(/^\| synthesize \| 0\/3\/0 \| 0\.25 \| 0\/3\/0 \| 0\.25 \|/m)

    // A second pass asks nothing, and reads the same answers back from the runs on disk.
    const before = (await requests(client)).length
    const again = await run(client, [...args, "--json"], envOf(dir))
    expect(again.code, again.stderr).toBe(0)
    expect(await requests(client)).toHaveLength(before)
    const report = JSON.parse(again.stdout)
    expect(report.baselines).toMatchObject({ items: 3, bestSingle: { model: "lv/right", correct: 3 }, oracle: { correct: 3 } })
    expect(report.paired[0]).toMatchObject({ strategy: "synthesize", bestSingle: { model: "lv/right", wins: 0, losses: 3, ties: 0 } })
  })
})

describe("the synthesizer alone (--baselines solo)", () => {
  const script = () =>
    Effect.runPromise(makeScriptedClient({
      "lv/right": [says("#### 4"), says("#### 4"), says("#### 9")],
      "lv/half": [says("#### 4"), says("#### 5"), says("#### 5")],
      // Asked three times to synthesize (wrong), then three times alone (right): --runs 1 runs the pairs in order.
      "lv/synth": [says("#### 7"), says("#### 7"), says("#### 7"), says("#### 4")]
    }))
  const lines = (dir: string) => fs.readFileSync(path.join(dir, "live.eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))

  it("asks the synthesizer each question directly, records and prices it, and the paired test takes it as the best single row", async () => {
    const client = await script()
    const dir = tempDir()
    const file = dataset(dir)
    const args = ["eval", file, "-m", "lv/right", "-m", "lv/half", "-s", "lv/synth", "--runs", "1", "--baselines", "solo"]
    const r = await run(client, args, envOf(dir))
    expect(r.code, r.stderr).toBe(0)
    const alone = (await requests(client)).filter((q) => q.model === "lv/synth").slice(3)
    expect(alone).toHaveLength(3)
    // The question as it is, in one message: nothing to synthesize.
    for (const [i, q] of alone.entries()) {
      expect(q.messages).toEqual([{ role: "user", content: `What is 2+2? (q${i + 1})` }])
    }
    expect(r.stdout).toMatch(/^\| synthesizer-alone \(lv\/synth\) \| 100\.0 % \| .* \| 3\/3 \| \$0\.0003 \|/m)
    // Best single = the synthesizer alone (3/3 beats lv/right's 2/3): W/L/T 0/3/0; the vote (2/3): 0/2/1.
    expect(r.stdout).toContain("| paired | vs best single (synthesizer-alone (lv/synth)) W/L/T | p | vs majority vote W/L/T | p |")
    expect(r.stdout).toMatch(/^\| synthesize \| 0\/3\/0 \| 0\.25 \| 0\/2\/1 \| 0\.5 \| 0\/3\/0 \| 0\.25 \|/m)
    const solo = lines(dir).filter((l) => l.strategy === "synthesizer-alone")
    expect(solo.map((l) => [l.id, l.status, l.correct, l.cost])).toEqual([
      ["q1", "ok", true, 0.0001],
      ["q2", "ok", true, 0.0001],
      ["q3", "ok", true, 0.0001]
    ])
    const manifest = JSON.parse(fs.readFileSync(path.join(solo[0].runDir, "run.json"), "utf8"))
    expect(manifest).toMatchObject({ status: "ok", candidates: [{ model: "lv/synth", status: "ok" }] })
    expect(manifest).not.toHaveProperty("synthesis")
    expect(manifest.strategy.note).toMatch(/^synthesizer-alone: lv\/synth asked the question directly/)

    // Resumed: nothing asked again. Another temperature: the synthesizer alone is asked again too.
    const before = (await requests(client)).length
    expect((await run(client, args, envOf(dir))).code).toBe(0)
    expect(await requests(client)).toHaveLength(before)
    expect((await run(client, [...args, "--temperature", "0.3"], envOf(dir))).code).toBe(0)
    expect(lines(dir).filter((l) => l.strategy === "synthesizer-alone")).toHaveLength(6)
  })

  it("without any candidate's answers (self asks no panel), the paired test is against the synthesizer alone, over every item", async () => {
    const client = await script()
    const dir = tempDir()
    const args = ["eval", dataset(dir), "-m", "lv/right", "-s", "lv/synth", "--strategies", "self", "--runs", "1", "--baselines", "solo"]
    const r = await run(client, args, envOf(dir))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).not.toMatch(/^\| best single \(/m)
    expect(r.stdout).toContain("Paired, on the 3 items with an answer of the synthesizer alone:")
    expect(r.stdout).toMatch(/^\| self \| 0\/3\/0 \| 0\.25 \| — \| — \| 0\/3\/0 \| 0\.25 \|/m)
  })

  it("is on by default when an API key is set, off with --baselines none, and --baselines-only runs it alone", async () => {
    const client = await script()
    const dir = tempDir()
    const file = dataset(dir)
    const env = envOf(dir, { OPENROUTER_API_KEY: "sk-or-v1-test" })
    const base = ["eval", file, "-m", "lv/right", "-m", "lv/half", "-s", "lv/synth"]
    expect((await run(client, [...base, "--baselines", "none"], env)).code).toBe(0)
    expect(lines(dir).map((l) => l.strategy)).not.toContain("synthesizer-alone")
    expect((await run(client, base, env)).code).toBe(0)
    expect(lines(dir).filter((l) => l.strategy === "synthesizer-alone")).toHaveLength(3)
    const other = tempDir()
    const only = await run(client, ["eval", dataset(other), "-s", "lv/synth", "--baselines-only", "--baselines", "solo"], envOf(other))
    expect(only.code, only.stderr).toBe(0)
    expect(lines(other).map((l) => l.strategy)).toEqual(["synthesizer-alone", "synthesizer-alone", "synthesizer-alone"])
  })
})
