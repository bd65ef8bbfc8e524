import { Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { fromGsm8k, Gsm8kLine } from "../../src/programs/eval/gsm8k.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { jsonl } from "../support/jsonl.js"
import { repoRoot } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// `eval` in-process: the GSM8K baselines against a count made here by hand (from the file's own `is_correct`
// flags, not from eval's scorer), and a paid eval against the loopback fake that a second pass resumes without a
// single new request. The converter script (it reads the build) and
// two eval processes on one results file are test/e2e/eval.test.ts's.

const { root: tmp, freshDir } = tempRoot("pllm-eval-")
const provider = withFakeProvider({
  script: {
    "ev/synth": { kind: "ok", content: "Both agree.\n\n#### 18", usage: { prompt_tokens: 100, completion_tokens: 10, cost: 0.002 } },
    "ev/one": { kind: "ok", content: "It is 18.", usage: { prompt_tokens: 5, completion_tokens: 3, cost: 0.001 } },
    "ev/two": { kind: "ok", content: "A: 17", usage: { prompt_tokens: 5, completion_tokens: 3, cost: 0.001 } },
    "ev/down": { kind: "status", status: 400 }
  }
})

const envFor = (outputDir: string) => fakeCliEnv(provider.fake.url, { home: tmp, outputDir })

interface Row {
  readonly correct: number
  readonly n: number
  readonly accuracy: number
}

describe("parallel-llm eval --baselines-only", () => {
  it("computes the GSM8K baselines of the first 20 rows (the vote under both tie policies, the tie count) exactly as a hand count does, with no call and no key", async () => {
    const systems = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"] as const
    type Line = { ground_truth: string } & Record<(typeof systems)[number], { is_correct: boolean; solution: string }>
    const rows = fs.readFileSync(path.join(repoRoot, "data", "gsm8k-frozen-candidates.jsonl"), "utf8")
      .split("\n").slice(0, 20).map((l) => JSON.parse(l) as Line)
    // The hand count: upstream's own correctness flags; each solution's answer is its last line, "A: <n>".
    const answerOf = (solution: string) => Number(solution.trim().split("\n").at(-1)!.replace(/^A:\s*/, "").replace(/[$,]/g, ""))
    const perSystem = systems.map((s) => rows.filter((r) => r[s].is_correct).length)
    const best = Math.max(...perSystem)
    const oracle = rows.filter((r) => systems.some((s) => r[s].is_correct)).length
    // A tie goes to the best system's answer among the tied ones, or (the other policy) to the earliest system.
    const byStanding = systems.map((_, i) => i).sort((a, b) => perSystem[b]! - perSystem[a]!)
    const vote = (r: Line, order: ReadonlyArray<number>) => {
      const answers = systems.map((s) => answerOf(r[s].solution))
      const votes = answers.map((a) => answers.filter((b) => b === a).length)
      const top = Math.max(...votes)
      const winner = order.find((i) => votes[i] === top)!
      return { right: r[systems[winner]!].is_correct, tied: new Set(answers.filter((_, i) => votes[i] === top)).size > 1 }
    }
    const majority = rows.filter((r) => vote(r, byStanding).right).length
    const firstInLine = rows.filter((r) => vote(r, [0, 1, 2, 3]).right).length
    const tied = rows.filter((r) => vote(r, [0, 1, 2, 3]).tied).length

    const dir = freshDir("baselines")
    provider.fake.reset()
    const result = await runCliInProcess(["eval", "--dataset", "gsm8k", "--baselines-only", "--limit", "20", "--json"], {
      env: { PATH: process.env.PATH, HOME: tmp, OPENROUTER_BASE_URL: "https://openrouter.ai/api/v1", PARALLEL_LLM_OUTPUT_DIR: dir }
    })
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout) as {
      items: number
      baselines: {
        bestSingle: Row & { model: string }
        majority: Row
        majorityFirstInLine: Row
        tied: number
        oracle: Row
        candidates: ReadonlyArray<Row & { model: string }>
      }
    }
    expect(report.items).toBe(20)
    expect(report.baselines.candidates.map((c) => c.correct)).toEqual(perSystem)
    expect(report.baselines.bestSingle).toMatchObject({ model: systems[perSystem.indexOf(best)], correct: best, n: 20 })
    expect(report.baselines.majority).toMatchObject({ correct: majority, n: 20, tiePolicy: "best-single" })
    expect(report.baselines.majorityFirstInLine).toMatchObject({ correct: firstInLine, n: 20, tiePolicy: "first-in-line" })
    expect(report.baselines.tied).toBe(tied)
    expect(majority).not.toBe(firstInLine) // the 20 rows do tell the two policies apart
    expect(report.baselines.oracle).toMatchObject({ correct: oracle, n: 20 })
    expect(fs.readdirSync(dir)).toEqual([]) // not a run, not a results file
    expect(provider.fake.requests).toHaveLength(0)
  })

  it("prints the baselines as a Markdown table, and refuses an unknown strategy naming the known ones", async () => {
    const env = { PATH: process.env.PATH, HOME: tmp }
    // The same 20 rows as a dataset file of their own: the table is the point here (the built-in dataset is the test
    // above's).
    const first20 = path.join(freshDir("table"), "gsm8k-20.jsonl")
    const rows = fs.readFileSync(path.join(repoRoot, "data", "gsm8k-frozen-candidates.jsonl"), "utf8").split("\n").slice(0, 20)
    fs.writeFileSync(
      first20,
      rows.map((l) => `${JSON.stringify(fromGsm8k(Schema.decodeUnknownSync(Gsm8kLine)(JSON.parse(l))))}\n`).join("")
    )
    const table = await runCliInProcess(["eval", first20, "--scorer", "numeric", "--baselines-only"], { env })
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^\| best single \(\S+\) \| \d+\.\d % \| \d+\.\d–\d+\.\d % \| \d+\/20 \|/m)
    expect(table.stdout).toMatch(/^\| majority vote \(tie → best single's answer\) \| \d+\.\d % \|/m)
    expect(table.stdout).toMatch(/^\| majority vote \(tie → first in line\) \| \d+\.\d % \|/m)
    expect(table.stdout).toMatch(/^Tied votes: \d+ of 20 items \(there the tie policy decides the vote\)\.$/m)
    expect(table.stdout).toMatch(/^\| oracle \(any candidate right\) \|/m)

    const unknown = await runCliInProcess(["eval", "--dataset", "gsm8k", "--strategies", "synthesize,borda"], {
      env: envFor(freshDir("unknown"))
    })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe(`parallel-llm: --strategies: unknown strategy "borda" (known: synthesize, rank, refine, self)\n`)
  })

  it("--limit N alone decodes only the first N items: a bad line after them is not reported (with --sample, it is)", async () => {
    const env = { PATH: process.env.PATH, HOME: tmp }
    const file = path.join(freshDir("limit"), "long.jsonl")
    fs.writeFileSync(
      file,
      jsonl([{ question: "q1", answer: "18", candidates: { m1: "A: 18", m2: "A: 26" } }, "{ not json", { question: "x" }])
    )
    const limited = await runCliInProcess(["eval", file, "--baselines-only", "--limit", "1", "--json"], { env })
    expect(limited.code, limited.stderr).toBe(0)
    expect(JSON.parse(limited.stdout)).toMatchObject({ items: 1, baselines: { oracle: { correct: 1, n: 1 } } })
    const refused = `parallel-llm: ${file} line 2: not valid JSON (and 1 more bad line)\n`
    const sampled = await runCliInProcess(["eval", file, "--baselines-only", "--limit", "1", "--sample", "1", "--json"], { env })
    expect([sampled.code, sampled.stderr]).toEqual([2, refused])
    const whole = await runCliInProcess(["eval", file, "--baselines-only", "--json"], { env })
    expect([whole.code, whole.stderr]).toEqual([2, refused])
  })

  it("refuses a bad dataset line before any call, naming the line and the field", async () => {
    const dir = freshDir("bad")
    const file = path.join(dir, "bad.jsonl")
    fs.writeFileSync(file, `{"question": "1+1?", "answer": "2"}\n{"question": "2+2?", "candidates": {"a": "4"}}\n{"question": "x"}\n`)
    const result = await runCliInProcess(["eval", file], { env: envFor(path.join(dir, "runs")) })
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(`parallel-llm: ${file} line 2: answer: is missing (and 1 more bad line)\n`)
    expect(fs.existsSync(path.join(dir, "runs"))).toBe(false)
  })
})

describe("parallel-llm eval (paid, against the loopback fake)", () => {
  it("pays only the synthesis for frozen candidates, keeps every run, and a second pass pays nothing", async () => {
    const dir = freshDir("paid")
    const file = path.join(dir, "math.jsonl")
    fs.writeFileSync(
      file,
      jsonl([
        { id: "eggs", question: "How many dollars?", answer: "18", candidates: { m1: "A: 18", m2: "A: 26" } },
        { id: "bolts", question: "How many bolts?", answer: "3", candidates: { m1: "A: 3", m2: "A: 3", m3: "A: 250" } },
        { question: "Asked for real", answer: "#### 18" }
      ])
    )
    const args = ["eval", file, "-m", "ev/one", "-m", "ev/two", "-s", "ev/synth", "--json"]
    const runs = path.join(dir, "runs")
    const count = (model: string) => provider.fake.chatRequests().filter((r) => r.model === model).length
    const before = { synth: count("ev/synth"), one: count("ev/one"), two: count("ev/two") }

    const first = await runCliInProcess(args, { env: envFor(runs) })
    expect(first.code, first.stderr).toBe(0)
    // Two frozen items: one synthesis each. The third: both candidates, then its synthesis.
    expect(count("ev/synth") - before.synth).toBe(3)
    expect([count("ev/one") - before.one, count("ev/two") - before.two]).toEqual([1, 1])
    const synthBodies = provider.fake.chatRequests().filter((r) => r.model === "ev/synth").slice(-3).map((r) => JSON.stringify(r.body))
    expect(synthBodies.some((b) => b.includes("A: 250"))).toBe(true) // the frozen answers reach the synthesizer
    expect(first.stderr).toMatch(/parallel-llm eval: 3\/3 · 3 ok, 0 failed .* · 2 correct/)

    type Report = { strategies: ReadonlyArray<Row & { strategy: string; cost: number; tokens: { prompt: number; completion: number } }> }
    const report = JSON.parse(first.stdout) as Report
    expect(report.strategies).toHaveLength(1)
    expect(report.strategies[0]).toMatchObject({ strategy: "synthesize", correct: 2, n: 3, tokens: { prompt: 310, completion: 36 } })
    expect(report.strategies[0]!.cost).toBeCloseTo(0.008, 6)
    expect(fs.readdirSync(runs)).toHaveLength(3)
    const results = fs.readFileSync(path.join(dir, "math.eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(results).toHaveLength(3)
    const eggs = results.find((r) => r.id === "eggs")
    expect(eggs).toMatchObject({ strategy: "synthesize", status: "ok", correct: true, extracted: "18" })
    expect(fs.readFileSync(path.join(eggs.runDir, "responses", "02-m2.md"), "utf8")).toBe("A: 26")
    expect(JSON.parse(fs.readFileSync(path.join(eggs.runDir, "run.json"), "utf8"))).toMatchObject({
      status: "ok",
      candidates: [{ model: "m1", status: "ok" }, { model: "m2", status: "ok" }],
      usage: { promptTokens: 100, completionTokens: 10 }
    })

    const second = await runCliInProcess(args, { env: envFor(runs) })
    expect(second.code, second.stderr).toBe(0)
    expect([count("ev/synth"), count("ev/one"), count("ev/two")]).toEqual([before.synth + 3, before.one + 1, before.two + 1])
    expect(second.stderr).toContain("3 skipped")
    expect(JSON.parse(second.stdout)).toEqual({ ...report })
    expect(fs.readdirSync(runs)).toHaveLength(3)
    expect(fs.readFileSync(path.join(dir, "math.eval.jsonl"), "utf8").trim().split("\n")).toHaveLength(3)

    // A corrected answer rescores the earlier run from its final.md, still without a call.
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(`"answer":"18"`, `"answer":"26"`))
    const third = await runCliInProcess(args, { env: envFor(runs) })
    expect(third.code, third.stderr).toBe(0)
    expect([count("ev/synth"), count("ev/one"), count("ev/two")]).toEqual([before.synth + 3, before.one + 1, before.two + 1])
    expect((JSON.parse(third.stdout) as Report).strategies[0]).toMatchObject({ correct: 1, n: 3 })
  })

  it("compares the strategy with the best single system and the vote item by item: wins, losses, ties and McNemar's exact p", async () => {
    const dir = freshDir("paired")
    const file = path.join(dir, "paired.jsonl")
    // The synthesizer always answers 18. Per item: the answer, then m1, m2, m3 (m1 is right 3 times, m2 and m3
    // twice: m1 is the best single system), and by hand: the strategy against m1 and against the vote
    // (a tie goes to m1's answer among the tied ones).
    const items: ReadonlyArray<readonly [string, string, string, string]> = [
      ["18", "18", "4", "5"], // right; m1 right → T; vote 3-way tie → m1's 18, right → T
      ["18", "7", "18", "18"], // right; m1 wrong → W; vote 18 → T
      ["18", "7", "7", "18"], // W; vote 7 → W
      ["18", "7", "6", "5"], // W; tie → m1's 7 → W
      ["18", "1", "2", "3"], // W; W
      ["18", "3", "4", "6"], // W; W
      ["18", "3", "4", "6"], // W; W
      ["18", "3", "4", "6"], // W; W
      ["5", "5", "5", "18"], // wrong; m1 right → L; vote 5 → L
      ["5", "5", "1", "2"], // L; tie → m1's 5 → L
      ["9", "1", "2", "3"] // both wrong → T; T
    ]
    fs.writeFileSync(
      file,
      items.map(([answer, m1, m2, m3], i) =>
        JSON.stringify({ id: `q${i}`, question: `Question ${i}?`, answer, candidates: { m1: `A: ${m1}`, m2: `A: ${m2}`, m3: `A: ${m3}` } })
      ).join("\n") + "\n"
    )
    // Against m1: W 7, L 2, T 2 → p = 2·(C(9,0) + C(9,1) + C(9,2))/2^9 = 2·46/512. Against the vote: W 6, L 2,
    // T 3 → p = 2·(C(8,0) + C(8,1) + C(8,2))/2^8 = 2·37/256.
    const vsBest = { model: "m1", wins: 7, losses: 2, ties: 2, p: 92 / 512 }
    const vsVote = { wins: 6, losses: 2, ties: 3, p: 74 / 256 }
    const args = ["eval", file, "-m", "ev/one", "-s", "ev/synth"]
    const runs = path.join(dir, "runs")

    const json = await runCliInProcess([...args, "--json"], { env: envFor(runs) })
    expect(json.code, json.stderr).toBe(0)
    const report = JSON.parse(json.stdout) as {
      strategies: ReadonlyArray<Row & { costPerCorrect: number }>
      paired: ReadonlyArray<{ strategy: string; items: number; bestSingle: typeof vsBest; majority: typeof vsVote }>
    }
    expect(report.strategies[0]).toMatchObject({ correct: 8, n: 11 })
    // 11 syntheses at $0.002, 8 right.
    expect(report.strategies[0]!.costPerCorrect).toBeCloseTo(0.022 / 8, 10)
    expect(report.paired).toHaveLength(1)
    const paired = report.paired[0]!
    expect(paired).toMatchObject({ strategy: "synthesize", items: 11, bestSingle: { model: "m1", wins: 7, losses: 2, ties: 2 } })
    expect(paired.majority).toMatchObject({ wins: 6, losses: 2, ties: 3 })
    expect(paired.bestSingle.p).toBeCloseTo(vsBest.p, 12)
    expect(paired.majority.p).toBeCloseTo(vsVote.p, 12)

    // The table, from the results file without a call: 0.1796875 and 0.2890625 to four decimals; $0.00275 per
    // correct answer (0.0027499… in floating point).
    const table = await runCliInProcess(args, { env: envFor(runs) })
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain("| paired | vs best single (m1) W/L/T | p | vs majority vote W/L/T | p |")
    expect(table.stdout).toContain("| synthesize | 7/2/2 | 0.1797 | 6/2/3 | 0.2891 |")
    expect(table.stdout).toMatch(/\| synthesize \(ev\/synth\) \| 72\.7 % \|.*\| 8\/11 \| \$0\.0220 \| \$0\.0027 \|/)
  })

  it("--check-models checks the models once for the whole eval, before any paid call", async () => {
    const dir = freshDir("check")
    const file = path.join(dir, "few.jsonl")
    const line = (id: number) => JSON.stringify({ question: `q${id}`, answer: "1", candidates: { a: "A: 1" } })
    fs.writeFileSync(file, `${[1, 2, 3].map(line).join("\n")}\n`)
    provider.fake.reset()
    const result = await runCliInProcess(["eval", file, "-s", "nope/synth", "--check-models"], { env: envFor(path.join(dir, "runs")) })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("unknown model at")
    expect(result.stderr).toContain("nope/synth")
    expect(provider.fake.requests.map((r) => r.path)).toEqual(["/api/v1/models"])
  })

  it("a run whose synthesis failed (the answer fell back to a candidate's) is failed and not scored, and is retried", async () => {
    const dir = freshDir("fallback")
    const file = path.join(dir, "one.jsonl")
    fs.writeFileSync(file, `${JSON.stringify({ question: "q", answer: "1", candidates: { a: "A: 1" } })}\n`)
    const args = ["eval", file, "-s", "ev/down", "--json"]
    const first = await runCliInProcess(args, { env: envFor(path.join(dir, "runs")) })
    expect(first.code, first.stderr).toBe(1)
    expect(JSON.parse(first.stdout).strategies[0]).toMatchObject({ correct: 0, n: 1, runs: { ok: 0, partial: 0, failed: 1 } })
    const [result] = fs.readFileSync(path.join(dir, "one.eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(result).toMatchObject({ status: "failed", correct: false })
    expect(result.error).toMatch(/^the synthesis failed \(.*\): not scored$/)
    const asked = provider.fake.chatRequests().filter((r) => r.model === "ev/down").length
    const second = await runCliInProcess(args, { env: envFor(path.join(dir, "runs")) })
    expect(second.code).toBe(1)
    expect(provider.fake.chatRequests().filter((r) => r.model === "ev/down").length).toBe(asked + 1)
  })
})
