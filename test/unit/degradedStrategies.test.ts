import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { FROZEN_TWO, jsonl } from "../support/jsonl.js"
import { onlyManifestIn } from "../support/mcpHarness.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 25, item 6: a strategy that fell back to a plain synthesis (no ranking counted, a refinement round
// nobody answered) says so: in the run's manifest, its summary (CLI and MCP), and eval's strategy row.

const provider = withFakeProvider()
const tempDir = makeTempDirs("pllm-degraded-")

beforeEach(() => {
  provider.fake.reset()
  // Every judge answers without a ranking; every refinement fails; the candidates and the synthesizer answer.
  provider.fake.setScript({
    "dg/one": [{ kind: "ok", content: "one says 18" }, { kind: "ok", content: "They all have merit." }],
    "dg/two": [{ kind: "ok", content: "two says 26" }, { kind: "ok", content: "Both are fine." }],
    "dg/synth": { kind: "ok", content: "#### 18" }
  })
})

describe("a run whose strategy fell back", () => {
  it("rank with no ranking counted: the manifest's strategy record and the summary say it is degraded", async () => {
    const dir = tempDir()
    const r = await runCliInProcess(["ask", "How many?", "-m", "dg/one", "-m", "dg/two", "-s", "dg/synth", "--strategy", "rank"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/ · rank: 0\/2 rankings counted \(degraded: 0\/2 rankings counted: the answers were synthesized unranked\) · /)
    expect(onlyManifestIn(path.join(dir, "runs")).strategy).toMatchObject({
      name: "rank",
      degraded: "0/2 rankings counted: the answers were synthesized unranked"
    })
  })

  it("refine with a round nobody answered: degraded in the manifest and in the MCP result's summary", async () => {
    provider.fake.setScript({
      "dg/one": [{ kind: "ok", content: "one says 18" }, { kind: "status", status: 400 }],
      "dg/two": [{ kind: "ok", content: "two says 26" }, { kind: "status", status: 400 }],
      "dg/synth": { kind: "ok", content: "#### 18" }
    })
    const dir = tempDir()
    const env = { ...provider.cliEnv(dir), PARALLEL_LLM_MODELS: "dg/one,dg/two", PARALLEL_LLM_SYNTHESIZER: "dg/synth" }
    const mcp = await connectMcpInProcess(Object.fromEntries(Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]]))))
    try {
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "How many?", strategy: "refine", wait: 60 } })
      const text = (result.content as ReadonlyArray<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n")
      expect(text).toContain(
        "refine: 0/1 more round answered (degraded, the strategy fell back: round 2: no model answered; round 1 was synthesized)"
      )
    } finally {
      await mcp.close()
    }
    expect(onlyManifestIn(path.join(dir, "runs")).strategy).toMatchObject({
      name: "refine",
      degraded: "round 2: no model answered; round 1 was synthesized"
    })
  })
})

describe("eval's strategy rows", () => {
  it("show the rankings counted over all runs, and mark a strategy that fell back as degraded", async () => {
    const dir = tempDir()
    const file = path.join(dir, "frozen.jsonl")
    fs.writeFileSync(file, jsonl(FROZEN_TWO))
    // Over frozen answers the configured models judge: each one's reply is its first scripted one.
    provider.fake.setScript({
      "dg/one": { kind: "ok", content: "They all have merit." },
      "dg/two": { kind: "ok", content: "Both are fine." },
      "dg/synth": { kind: "ok", content: "#### 18" }
    })
    const r = await runCliInProcess(["eval", file, "-m", "dg/one", "-m", "dg/two", "-s", "dg/synth", "--strategies", "rank,synthesize"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(
      /^\| rank \(dg\/synth\), rank: 0\/4 rankings counted, \*\*degraded\*\* in 2 runs \(fell back to synthesize\) \| 50\.0 % \|/m
    )
    expect(r.stdout).toMatch(/^\| synthesize \(dg\/synth\) \| 50\.0 % \|/m)
    const lines = fs.readFileSync(path.join(dir, "frozen.eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(lines.filter((l) => l.strategy === "rank").map((l) => [l.steps, l.degraded])).toEqual([
      [{ done: 0, of: 2 }, "0/2 rankings counted: the answers were synthesized unranked"],
      [{ done: 0, of: 2 }, "0/2 rankings counted: the answers were synthesized unranked"]
    ])
    const json = await runCliInProcess(
      ["eval", file, "-m", "dg/one", "-m", "dg/two", "-s", "dg/synth", "--strategies", "rank", "--json"],
      { env: provider.cliEnv(dir) }
    )
    expect(JSON.parse(json.stdout).strategies[0]).toMatchObject({ strategy: "rank", steps: { done: 0, of: 4 }, degraded: 2 })
  })
})
