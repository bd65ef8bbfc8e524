import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import type { Manifest } from "../../src/domain/manifest.js"
import { REPORT_DELIMITER, SYNTHESIS_REPLY_FORMAT } from "../../src/programs/synthesisReply.js"
import { type ModelSpec } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { serverEnv } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// The disagreement report end to end, over loopback HTTP: the CLI and the MCP server (both in this process) ask the
// synthesizer for its answer and report in one call (structured output where `/models` says the model
// does it, plain text elsewhere), and the report lands in the manifest, `--json`, `--report` and MCP.

const MODELS = ["rep/a", "rep/b"]
const SYNTH = "rep/synth"
const ANSWER = "# Merged\n\nIt is **4**."
const FINDINGS = {
  agreements: ["2 + 2 = 4"],
  contradictions: [{ topic: "the unit", positions: [{ candidates: ["A"], claim: "none" }, { candidates: ["B"], claim: "apples" }] }],
  uniqueClaims: [{ candidate: "B", claim: "apples are red \u001b]0;pwned\u0007" }],
  confidence: "medium",
  confidenceReason: "One candidate adds a unit."
}
const STRUCTURED = JSON.stringify({ answer: ANSWER, ...FINDINGS })
const PLAIN = `${ANSWER}\n\n${REPORT_DELIMITER}\n${JSON.stringify(FINDINGS)}`
/** A catalogue entry saying the model does strict structured output, as OpenRouter's `/models` does. */
const structuredModel = (id: string): ModelSpec => ({ id, supported_parameters: ["temperature", "response_format", "structured_outputs"] })

const { root: tmp, freshDir } = tempRoot("pllm-report-")
const env = (out: string) => ({
  PATH: process.env.PATH,
  HOME: tmp,
  OPENROUTER_BASE_URL: provider.fake.url,
  OPENROUTER_API_KEY: "sk-or-report-test",
  PARALLEL_LLM_OUTPUT_DIR: out,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  // Structured output is asked for, not the default (see test/reportVia.test.ts).
  PARALLEL_LLM_REPORT_VIA: "structured"
})
const ask = (out: string, ...extra: Array<string>) =>
  runCliInProcess(["ask", "What is 2+2?", ...MODELS.flatMap((m) => ["-m", m]), "-s", SYNTH, ...extra], { env: env(out) })
const manifestIn = (out: string): Manifest => {
  const [runId] = fs.readdirSync(out)
  return JSON.parse(fs.readFileSync(path.join(out, runId!, "run.json"), "utf8")) as Manifest
}
const synthBodies = () => provider.fake.chatRequests().filter((r) => r.model === SYNTH).map((r) => r.body as Record<string, unknown>)
const systemOf = (body: Record<string, unknown>) => (body["messages"] as Array<{ role: string; content: string }>)[0]!.content

const provider = withFakeProvider()
beforeEach(() => {
  provider.fake.setScript({
    "rep/a": { kind: "ok", content: "4" },
    "rep/b": { kind: "ok", content: "4 apples" },
    [SYNTH]: { kind: "ok", content: STRUCTURED }
  })
  provider.fake.setModels([structuredModel(SYNTH), { id: "rep/a" }, { id: "rep/b" }])
  provider.fake.reset()
})

describe("the disagreement report from the CLI", () => {
  it("structured output when /models says so: the generated schema is sent, the streamed JSON decoded, --report prints it clean", async () => {
    const out = freshDir("structured")
    const r = await ask(out, "--report")
    expect(r.code, r.stderr).toBe(0)
    const [body] = synthBodies()
    expect(body?.["stream"]).toBe(true)
    expect(body?.["response_format"]).toEqual({
      type: "json_schema",
      json_schema: { name: "synthesis", strict: true, schema: SYNTHESIS_REPLY_FORMAT.schema }
    })
    for (const candidate of provider.fake.chatRequests().filter((q) => q.model !== SYNTH)) {
      expect(candidate.body).not.toHaveProperty("response_format")
    }

    const manifest = manifestIn(out)
    const runDir = path.join(out, manifest.id)
    expect(fs.readFileSync(path.join(runDir, "final.md"), "utf8")).toBe(ANSWER)
    expect(manifest.report).toEqual({
      status: "ok",
      via: "structured",
      ...FINDINGS,
      uniqueClaims: [{ candidate: "B", claim: "apples are red ]0;pwned" }]
    })
    const modelOf = (label: string) => manifest.synthesis?.labels?.find((l) => l.label === label)?.model
    expect(r.stdout.startsWith(`${ANSWER}\n\n## Disagreement report\n`)).toBe(true)
    expect(r.stdout).toContain("Confidence: medium. One candidate adds a unit.")
    expect(r.stdout).toContain(`- the unit\n  - A (${modelOf("A")}): none\n  - B (${modelOf("B")}): apples`)
    expect(r.stdout).toContain(`- B (${modelOf("B")}): apples are red ]0;pwned`)
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/)

    // The same report for a re-synthesis, and `runs show --report` prints the one on disk.
    const again = await runCliInProcess(["resynth", manifest.id, "--report"], { env: env(out) })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain("## Disagreement report\n\nConfidence: medium.")
    const shown = await runCliInProcess(["runs", "show", manifest.id, "--report"], { env: env(out) })
    expect(shown.stdout).toContain(`${ANSWER}\n\n## Disagreement report\n\nConfidence: medium.`)
  })

  it("ask --json includes the report, beside the answer as plain Markdown", async () => {
    const out = freshDir("json")
    const r = await ask(out, "--json")
    expect(r.code, r.stderr).toBe(0)
    const printed = JSON.parse(r.stdout) as Manifest & { final: string }
    expect(printed.final).toBe(ANSWER)
    expect(printed.report).toMatchObject({ status: "ok", via: "structured", agreements: ["2 + 2 = 4"], confidence: "medium" })
  })

  it("plain text where /models does not list structured output: no response_format, the report read after the delimiter", async () => {
    provider.fake.setModels([{ id: SYNTH }])
    provider.fake.setScript({ [SYNTH]: { kind: "ok", content: PLAIN } })
    const out = freshDir("text")
    const r = await ask(out)
    expect(r.code, r.stderr).toBe(0)
    const [body] = synthBodies()
    expect(body).not.toHaveProperty("response_format")
    expect(systemOf(body!)).toContain(`write a line holding exactly ${REPORT_DELIMITER}`)
    expect(r.stdout).toBe(`${ANSWER}\n`)
    const manifest = manifestIn(out)
    expect(fs.readFileSync(path.join(out, manifest.id, "final.md"), "utf8")).toBe(ANSWER)
    expect(manifest.report).toMatchObject({ status: "ok", via: "text", contradictions: FINDINGS.contradictions })
  })

  it("a reply that does not decode: the report is unavailable with the reason, final.md holds the answer", async () => {
    provider.fake.setScript({ [SYNTH]: { kind: "ok", content: "{\"answer\": \"It is 4, as far as", finishReason: "length" } })
    const out = freshDir("undecodable")
    const r = await ask(out, "--report")
    expect(r.code, r.stderr).toBe(0)
    const manifest = manifestIn(out)
    expect(manifest.status).toBe("ok")
    expect(fs.readFileSync(path.join(out, manifest.id, "final.md"), "utf8")).toBe("It is 4, as far as")
    expect(manifest.report).toMatchObject({ status: "unavailable", reason: expect.stringContaining("the structured reply did not decode") })
    expect(r.stdout).toContain("## Disagreement report\n\nUnavailable: the structured reply did not decode")
  })

  it("a synthesizer that refuses the response format (400) is asked again in plain text", async () => {
    provider.fake.setScript({ [SYNTH]: [{ kind: "status", status: 400 }, { kind: "ok", content: PLAIN }] })
    const out = freshDir("refused")
    const r = await ask(out)
    expect(r.code, r.stderr).toBe(0)
    const [first, second] = synthBodies()
    expect(first).toHaveProperty("response_format")
    expect(second).not.toHaveProperty("response_format")
    const manifest = manifestIn(out)
    expect(manifest.synthesis).toMatchObject({ status: "ok", attempts: 2 })
    expect(manifest.report).toMatchObject({ status: "ok", via: "text" })
  })

  it("every synthesizer failed: the answer is a candidate's, the report says why there is none", async () => {
    provider.fake.setScript({
      "rep/a": { kind: "ok", content: "4" },
      "rep/b": { kind: "ok", content: "4" },
      [SYNTH]: { kind: "status", status: 401 }
    })
    const out = freshDir("nosynth")
    const r = await ask(out, "--report")
    expect(r.code, r.stderr).toBe(0)
    const manifest = manifestIn(out)
    expect(manifest.synthesis?.fallbackToCandidate).toBeDefined()
    expect(manifest.report).toEqual({ status: "unavailable", reason: "every synthesizer failed, so the answer is one candidate's alone" })
    expect(r.stdout).toContain("Unavailable: every synthesizer failed")
  })
})

describe("the disagreement report over MCP", () => {
  it("structuredContent: final, then report (with the label → model map), then summary; /models asked once", async () => {
    const out = freshDir("mcp")
    const connection = await connectMcpInProcess(
      // Structured output is asked for, as in the CLI tests above (the default is text: test/unit/reportVia.test.ts).
      {
        ...serverEnv({ baseUrl: provider.fake.url, outputDir: out, apiKey: "sk-or-report-test", models: MODELS, synthesizer: SYNTH }),
        PARALLEL_LLM_REPORT_VIA: "structured"
      }
    )
    try {
      const tools = await connection.client.listTools()
      const output = tools.tools.find((t) => t.name === "process_prompt")?.outputSchema?.properties?.["report"] as { type?: string }
      expect(output.type).toBe("object")
      const result = await connection.client.callTool({ name: "process_prompt", arguments: { prompt: "What is 2+2?" } }) as CallToolResult
      expect(result.isError).toBeFalsy()
      // As a client reads it off the wire (the in-memory transport keeps keys whose value is undefined).
      const structured = JSON.parse(JSON.stringify(result.structuredContent)) as Record<string, unknown>
      // The contract's first keys (next only when there is something to do), then the report.
      expect(Object.keys(structured).filter((k) => ["final", "summary", "next", "report"].includes(k))).toEqual([
        "final",
        "summary",
        "report"
      ])
      expect(structured["final"]).toBe(ANSWER)
      // For clients whose model reads only the text blocks: the answer, the summary, then the report.
      expect(result.content.map((block) => (block.type === "text" ? block.text.split("\n")[0] : block.type))).toEqual([
        "# Merged",
        structured["summary"],
        "## Disagreement report"
      ])
      const manifest = manifestIn(out)
      expect(structured["report"]).toEqual({
        ...manifest.report,
        labels: Object.fromEntries((manifest.synthesis?.labels ?? []).map((l) => [l.label, l.model]))
      })

      // The catalogue is fetched once per server (per process), not once per run.
      const second = await connection.client.callTool({ name: "process_prompt", arguments: { prompt: "And 3+3?" } }) as CallToolResult
      expect((second.structuredContent as { report?: { via?: string } }).report?.via).toBe("structured")
      expect(provider.fake.requests.filter((r) => r.path.endsWith("/models"))).toHaveLength(1)
    } finally {
      await connection.close()
    }
  })
})
