import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { cliEffect } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { FROZEN_TWO, jsonl } from "../support/jsonl.js"
import { readManifest, serverEnv } from "../support/mcpHarness.js"
import { makeScriptedClient, type ScriptedClient } from "../support/scriptedClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// The strategies from the outside, in-process: `ask --strategy` through the command line, `strategy` of process_prompt over
// MCP, and `eval --strategies` over frozen answers, where only the aggregation is paid for. The command lines run over a
// scripted model client that answers as the fake below does (the strategies are the point; a run's calls over HTTP are
// cli.test.ts's); the MCP server calls the loopback fake.

const { root: tmp, freshDir } = tempRoot("pllm-strategies-cli-")
const provider = withFakeProvider({
  // Every model answers, and ends with a ranking a judge could give: each call may be a candidate's, a judge's or a refinement.
  default: { kind: "ok", content: "It is 18.\nRANKING: B > A" },
  script: { "st/synth": { kind: "ok", content: "#### 18" } }
})
const envFor = (outputDir: string) => fakeCliEnv(provider.fake.url, { home: tmp, outputDir }, { PARALLEL_LLM_RETRY_BASE_DELAY: "0.01" })
/** A model client that answers as the fake does: the synthesizer with the final number, every other model with a ranking too. */
const scripted = () =>
  Effect.runPromise(makeScriptedClient({ "st/synth": [{ answer: "#### 18" }] }, { answer: "It is 18.\nRANKING: B > A" }))
/** `parallel-llm ...args` in-process over `client`. */
const runCli = (client: ScriptedClient, args: ReadonlyArray<string>, env: ReturnType<typeof envFor>) =>
  Effect.runPromise(cliEffect(args, { env, overrides: client.layer, timeoutMs: 45_000 }))
const requests = (client: ScriptedClient) => Effect.runPromise(Ref.get(client.requests))
/** How many calls `client` got for `model`. */
const calls = async (client: ScriptedClient, model: string) => (await requests(client)).filter((r) => r.model === model).length
/** How many calls the fake got for `model` (the MCP server's). */
const count = (model: string) => provider.fake.chatRequests().filter((r) => r.model === model).length

describe("ask --strategy", () => {
  it("rank: the candidates judge each other, the manifest keeps the rankings, the answer is the synthesis", async () => {
    const out = freshDir("ask")
    const client = await scripted()
    const r = await runCli(client, [
      "ask",
      "What is 9+9?",
      "-m",
      "st/one",
      "-m",
      "st/two",
      "-s",
      "st/synth",
      "--strategy",
      "rank",
      "--json"
    ], envFor(out))
    expect(r.code, r.stderr).toBe(0)
    expect([await calls(client, "st/one"), await calls(client, "st/two"), await calls(client, "st/synth")]).toEqual([2, 2, 1])
    expect(r.stderr).toMatch(/parallel-llm: ok · 2\/2 answered · rank: 2\/2 rankings counted · /)
    const printed = JSON.parse(r.stdout) as {
      final: string
      runDir: string
      strategy: { name: string; judges: ReadonlyArray<{ ranking?: ReadonlyArray<string> }> }
    }
    expect(printed.final).toBe("#### 18")
    expect(printed.strategy.name).toBe("rank")
    // Two answers, each judge's own left out: each ranks the other one alone.
    expect(printed.strategy.judges.map((j) => j.ranking?.length)).toEqual([1, 1])
    expect(readManifest(printed.runDir)).toMatchObject({ status: "ok", strategy: { name: "rank" } })
    expect(fs.readdirSync(path.join(printed.runDir, "rankings")).sort()).toEqual(["01-st-one.md", "02-st-two.md"])
  })

  it("self with two -m models samples the first and says the second is not asked, as over MCP", async () => {
    const client = await scripted()
    const args = ["ask", "What is 9+9?", "-m", "st/one", "-m", "st/two", "-s", "st/synth", "--strategy", "self", "--samples", "2"]
    const r = await runCli(client, args, envFor(freshDir("self-two")))
    expect(r.code, r.stderr).toBe(0)
    expect([await calls(client, "st/one"), await calls(client, "st/two"), await calls(client, "st/synth")]).toEqual([2, 0, 1])
    expect(r.stderr).toContain("strategy self samples st/one only: st/two not asked")
    // One model named, or the configured ones: nothing to warn about.
    const one = await runCli(
      client,
      ["ask", "What is 9+9?", "-m", "st/one", "-s", "st/synth", "--strategy", "self", "--samples", "2"],
      envFor(freshDir("self-one"))
    )
    expect(one.code, one.stderr).toBe(0)
    expect(one.stderr).not.toContain("not asked")
  })

  it("a preset may carry the strategy and its judges", async () => {
    const dir = freshDir("preset")
    const config = path.join(dir, "panels.json")
    fs.writeFileSync(
      config,
      JSON.stringify({ presets: { ranked: { models: ["st/one", "st/two"], strategy: "rank", judge: ["st/judge"] } } })
    )
    const client = await scripted()
    const r = await runCli(client, ["ask", "What is 9+9?", "-s", "st/synth", "--config", config, "--preset", "ranked"], envFor(dir))
    expect(r.code, r.stderr).toBe(0)
    const counts = await Promise.all(["st/one", "st/two", "st/judge", "st/synth"].map((model) => calls(client, model)))
    expect(counts).toEqual([1, 1, 1, 1])
    expect(r.stderr).toContain("rank: 1/1 rankings counted")
  })

  it("refuses an unknown strategy before any call, naming the known ones", async () => {
    const client = await scripted()
    const r = await runCli(client, ["ask", "hi", "--strategy", "vote"], envFor(freshDir("bad")))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`unknown strategy "vote" (known: synthesize, rank, refine, self)`)
    expect(await requests(client)).toHaveLength(0)
  })
})

describe("process_prompt strategy", () => {
  it("self with samples: one model asked N times, the manifest says so", async () => {
    const out = freshDir("mcp")
    const mcp = await connectMcpInProcess(
      serverEnv({ baseUrl: provider.fake.url, outputDir: out, apiKey: "", models: ["st/one", "st/two"], synthesizer: "st/synth" })
    )
    try {
      provider.fake.reset()
      const result = await mcp.client.callTool({
        name: "process_prompt",
        arguments: { prompt: "What is 9+9?", strategy: "self", samples: 3, wait: 60 }
      }) as CallToolResult
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      const structured = result.structuredContent as { final: string; runDir: string }
      expect(structured.final).toBe("#### 18")
      expect([count("st/one"), count("st/two"), count("st/synth")]).toEqual([3, 0, 1])
      expect(readManifest(structured.runDir)).toMatchObject({ strategy: { name: "self", model: "st/one", samples: 3 } })

      const progress: Array<string> = []
      const ranked = await mcp.client.callTool(
        { name: "process_prompt", arguments: { prompt: "What is 9+9?", strategy: "rank", wait: 60 } },
        undefined,
        { onprogress: (p) => void progress.push(p.message ?? "") }
      ) as CallToolResult
      // The judges' step is reported like the candidates' and the synthesis.
      expect(progress.some((m) => /ranking: (asking 2 judges|\d\/2 judges done)/.test(m))).toBe(true)
      const files = (ranked.structuredContent as { files: Record<string, string> }).files
      expect(Object.keys(files)).toEqual(expect.arrayContaining(["rankings/01-st-one.md", "rankings/02-st-two.md"]))
      const judged = await mcp.client.readResource({ uri: files["rankings/02-st-two.md"]! })
      expect(JSON.stringify(judged.contents)).toContain("RANKING: B > A")

      const refused = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "x", strategy: "vote" } }) as CallToolResult
      expect(refused.isError).toBe(true)
      expect(JSON.stringify(refused.content)).toContain("strategy")
    } finally {
      await mcp.close()
    }
  })
})

describe("eval --strategies", () => {
  it("rank and refine over frozen answers pay only the aggregation, by the configured models; a second pass pays nothing", async () => {
    const dir = freshDir("eval")
    const file = path.join(dir, "frozen.jsonl")
    fs.writeFileSync(file, jsonl(FROZEN_TWO))
    const args = ["eval", file, "-m", "st/one", "-m", "st/two", "-s", "st/synth", "--strategies", "rank,refine"]
    const client = await scripted()
    const first = await runCli(client, args, envFor(path.join(dir, "runs")))
    expect(first.code, first.stderr).toBe(0)
    // Per row: rank asks 2 judges and the synthesizer; refine asks 2 refinements and the synthesizer.
    expect([await calls(client, "st/one"), await calls(client, "st/two"), await calls(client, "st/synth")]).toEqual([4, 4, 4])
    expect(await calls(client, "m1") + await calls(client, "m2")).toBe(0)
    for (const request of (await requests(client)).filter((r) => r.model !== "st/synth")) {
      const text = JSON.stringify(request.messages)
      // Both frozen answers of its row, anonymised.
      expect((text.includes("A: 18") && text.includes("A: 26")) || (text.includes("A: 3") && text.includes("A: 4"))).toBe(true)
      expect(text).not.toMatch(/\bm[12]\b/)
    }
    expect(first.stdout).toMatch(/^\| best single \(m1\) \|/m)
    expect(first.stdout).toMatch(/^\| rank \(st\/synth\), rank: 4\/4 rankings counted \| 50\.0 % \|/m)
    expect(first.stdout).toMatch(/^\| refine \(st\/synth\), refine: 2\/2 refinement rounds answered \| 50\.0 % \|/m)

    const results = fs.readFileSync(path.join(dir, "frozen.eval.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(results.map((r) => `${r.strategy} ${r.id} ${r.status}`).sort()).toEqual([
      "rank one ok",
      "rank two ok",
      "refine one ok",
      "refine two ok"
    ])
    const rankRun = readManifest(results.find((r) => r.strategy === "rank").runDir)
    expect(rankRun).toMatchObject({ strategy: { name: "rank", judges: [{ model: "st/one" }, { model: "st/two" }] } })
    const refineRun = readManifest(results.find((r) => r.strategy === "refine").runDir)
    expect(refineRun).toMatchObject({
      strategy: { name: "refine", rounds: [{ round: 2, answers: [{ model: "st/one" }, { model: "st/two" }] }] }
    })

    const second = await runCli(client, args, envFor(path.join(dir, "runs")))
    expect(second.code, second.stderr).toBe(0)
    expect(await requests(client)).toHaveLength(12)
    expect(second.stderr).toContain("4 skipped")

    // self has no use for answers from several systems: it samples the first configured model, and says so.
    const selfClient = await scripted()
    const self = await runCli(selfClient, [...args.slice(0, -1), "self", "--samples", "2"], envFor(path.join(dir, "runs")))
    expect(self.code, self.stderr).toBe(0)
    expect(self.stderr).toContain("self does not use the frozen candidates: it asks st/one 2 times per question")
    const selfCalls = await Promise.all(["st/one", "st/two", "st/synth"].map((model) => calls(selfClient, model)))
    expect(selfCalls).toEqual([4, 0, 2])
    expect(self.stdout).toMatch(/^\| self \(st\/synth\) \|/m)
  })
})
