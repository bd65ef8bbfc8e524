import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import type { EvalResult } from "../../src/programs/eval/evalResults.js"
import { markdownReport, strategyRows } from "../../src/programs/eval/report.js"
import type { RecordedRequest } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { onlyManifestIn } from "../support/mcpHarness.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 25, item 5: a reply that was billed but gave no usable text (empty, failed after streaming) still
// counts: its usage as the server reported it, or an estimate marked as one; the run's and eval's totals
// include it, and a cost that leaves an estimate out says so. Against the loopback provider, in-process.

const provider = withFakeProvider()
const tempDir = makeTempDirs("pllm-billed-")

beforeEach(() => provider.fake.reset())

/** The characters of the text a request sent (what the estimate of its prompt is made from). */
const promptChars = (request: RecordedRequest) =>
  (request.body as { messages: ReadonlyArray<{ content: string }> }).messages.reduce((n, m) => n + m.content.length, 0)

describe("a billed reply without an answer", () => {
  it("cut after streaming with usage, or empty with usage: each failed record keeps its usage, and the run's totals include it", async () => {
    provider.fake.setScript({
      "bl/cut": { kind: "streamError", partial: "It is", usage: { prompt_tokens: 100, completion_tokens: 7, cost: 0.002 } },
      "bl/empty": { kind: "emptyContent" },
      "bl/ok": { kind: "ok", content: "It is 4." },
      "bl/synth": { kind: "ok", content: "4." }
    })
    const dir = tempDir()
    const r = await runCliInProcess(["ask", "What is 2+2?", "-m", "bl/cut", "-m", "bl/empty", "-m", "bl/ok", "-s", "bl/synth"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code, r.stderr).toBe(0)
    const manifest = onlyManifestIn(path.join(dir, "runs"))
    expect(manifest.candidates.map((c: { status: string; usage?: unknown }) => [c.status, c.usage])).toEqual([
      ["error", { promptTokens: 100, completionTokens: 7, cost: 0.002 }],
      ["error", { promptTokens: 10, completionTokens: 20, cost: 0.0001 }],
      ["ok", { promptTokens: 10, completionTokens: 20, cost: 0.0001 }]
    ])
    // Three candidates and the synthesis, all billed.
    expect(manifest.usage).toEqual({ promptTokens: 130, completionTokens: 67, cost: 0.0023 })
    expect(r.stderr).toMatch(/ · 197 tokens · \$0\.0023 · /)
  })

  it("cut after streaming without usage: estimated from the prompt's and the streamed text's length, marked, its cost unknown (never 0)", async () => {
    provider.fake.setScript({
      "bl/cut": { kind: "streamError", partial: "The answer, worked out at length, is" },
      "bl/ok": { kind: "ok", content: "It is 4." },
      "bl/synth": { kind: "ok", content: "4." }
    })
    const dir = tempDir()
    const r = await runCliInProcess(["ask", "What is 2+2? Show the working.", "-m", "bl/cut", "-m", "bl/ok", "-s", "bl/synth"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code, r.stderr).toBe(0)
    const manifest = onlyManifestIn(path.join(dir, "runs"))
    const sent = provider.fake.chatRequests().find((q) => q.model === "bl/cut")!
    const estimate = {
      promptTokens: Math.ceil(promptChars(sent) / 4),
      completionTokens: Math.ceil("The answer, worked out at length, is".length / 4),
      estimated: true
    }
    expect(estimate.promptTokens).toBeGreaterThan(0)
    expect(manifest.candidates[0]).toMatchObject({ status: "error", usage: estimate })
    expect(manifest.usage).toEqual({
      promptTokens: estimate.promptTokens + 20,
      completionTokens: estimate.completionTokens + 40,
      cost: 0.0002,
      estimatedCalls: 1
    })
    const tokens = estimate.promptTokens + estimate.completionTokens + 60
    expect(r.stderr).toContain(` · ${tokens} tokens (1 call estimated) · $0.0002 + unknown · `)
  })

  it("an error before any text bills nothing: no usage is made up", async () => {
    provider.fake.setScript({
      "bl/down": { kind: "status", status: 400 },
      "bl/ok": { kind: "ok", content: "4" },
      "bl/synth": { kind: "ok", content: "4." }
    })
    const dir = tempDir()
    const r = await runCliInProcess(["ask", "What is 2+2?", "-m", "bl/down", "-m", "bl/ok", "-s", "bl/synth"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code, r.stderr).toBe(0)
    const manifest = onlyManifestIn(path.join(dir, "runs"))
    expect(manifest.candidates[0]).not.toHaveProperty("usage")
    expect(manifest.usage).toEqual({ promptTokens: 20, completionTokens: 40, cost: 0.0002 })
  })

  it("eval over live candidates: the results line and the strategy row count the empty reply's tokens", async () => {
    provider.fake.setScript({
      "bl/empty": { kind: "emptyContent" },
      "bl/ok": { kind: "ok", content: "#### 4" },
      "bl/synth": { kind: "ok", content: "#### 4" }
    })
    const dir = tempDir()
    const file = path.join(dir, "live.jsonl")
    fs.writeFileSync(file, `${JSON.stringify({ id: "q1", question: "What is 2+2?", answer: "4" })}\n`)
    const r = await runCliInProcess(["eval", file, "-m", "bl/empty", "-m", "bl/ok", "-s", "bl/synth", "--json"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code, r.stderr).toBe(0)
    const [line] = fs.readFileSync(path.join(dir, "live.eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(line).toMatchObject({ strategy: "synthesize", promptTokens: 30, completionTokens: 60, cost: 0.0003 })
    expect(JSON.parse(r.stdout).strategies[0]).toMatchObject({ tokens: { prompt: 30, completion: 60 }, cost: 0.0003, unknownCost: 0 })
  })
})

describe("eval's strategy row of runs with estimated or unreported usage", () => {
  const line = (id: string, extra: Partial<EvalResult>): EvalResult => ({
    strategy: "synthesize",
    id,
    line: 1,
    fingerprint: "f",
    runDir: `/runs/${id}`,
    status: "ok",
    scorer: "numeric",
    answer: "4",
    correct: true,
    cost: 0.001,
    promptTokens: 10,
    completionTokens: 5,
    durationMs: 1000,
    ...extra
  })
  const row = (results: ReadonlyArray<EvalResult>) =>
    markdownReport({
      dataset: "d",
      scorer: "numeric",
      items: results.length,
      baselines: null,
      strategies: strategyRows(["synthesize"], results, results.length)
    })
      .split("\n").find((l) => l.startsWith("| synthesize"))

  it("says the tokens are estimated in part and the cost unknown in part; an unreported call's tokens are unknown, never 0", () => {
    expect(row([line("a", { estimatedCalls: 1 }), line("b", {})])).toContain("| $0.0020 + unknown | — | 30 (estimated in part) |")
    expect(row([line("a", { unreportedCalls: 1 }), line("b", {})])).toContain("| 30 + unknown |")
    expect(row([line("a", { promptTokens: null, completionTokens: null, cost: null, unreportedCalls: 3 })])).toContain(
      "| unknown | — | unknown |"
    )
  })
})
