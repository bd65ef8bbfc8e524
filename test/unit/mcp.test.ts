import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { type CallToolResult, LoggingMessageNotificationSchema, type Progress } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeGate } from "../support/fakeOpenRouter.js"
import { connectMcpInProcess, type InProcessConnection, pendingSleepBelow, testClockOf } from "../support/inProcessMcp.js"
import { readManifest, runIdIn, serverEnv } from "../support/mcpHarness.js"
import { waitFor } from "../support/waitFor.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// The MCP server as an MCP client sees it: the server `serve` starts from the same environment, in this
// process, driven by the SDK's own Client over its in-memory transport, against the loopback fake OpenRouter
// (the stdio process itself is e2e/mcpProcess.test.ts's). No timing assertions: every wait is a poll with a
// generous deadline.

const API_KEY = "sk-or-v1-MCP-SECRET-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
const MODELS = ["mcp/alpha", "mcp/beta", "mcp/gamma"]
const SYNTH = "mcp/synth"
const SYNTH_ANSWER = "# Merged\n\nAll three agree: **4**."

/** mcp/slow answers only once a test opens this. */
const slow = makeGate()
/** The synthesizer answers at once, but while the progress test holds it (open but there). */
const synthHeld = makeGate()
synthHeld.open()

const provider = withFakeProvider({
  script: {
    // Each in a moment of its own, in model order (10 ms apart: a run of the three waits 30 ms, not 150).
    "mcp/alpha": { kind: "ok", content: "alpha says 4", delayMs: 10 },
    "mcp/beta": { kind: "ok", content: "beta says 4", delayMs: 20 },
    "mcp/gamma": { kind: "ok", content: "gamma says 4", delayMs: 30 },
    // Held by the progress test until its client has the progress sent as the synthesis starts: sent with the result,
    // it could arrive in the same read (the SDK client drops a progress notification it handles after the response).
    "mcp/synth": { kind: "ok", content: SYNTH_ANSWER, until: synthHeld.until },
    "mcp/slow": { kind: "ok", content: "slow but sure", until: slow.until },
    "mcp/hang": { kind: "hang" },
    "mcp/hang2": { kind: "hang" },
    "fail/limited": { kind: "status", status: 429 },
    "fail/denied": { kind: "status", status: 401 },
    // A provider that echoes the key back in its error: the MCP output must still never show it.
    "fail/echo": { kind: "status", status: 401, body: { error: { code: 401, message: `Invalid key. Received API Key = ${API_KEY}` } } },
    "fail/hang": { kind: "hang" }
  }
})
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-mcp-"))
let dirCount = 0
const freshDir = () => path.join(tmp, `runs-${++dirCount}`)

const envFor = (outputDir: string, extra: Record<string, string> = {}, models: ReadonlyArray<string> = MODELS) =>
  serverEnv({ baseUrl: provider.url, outputDir, apiKey: API_KEY, models, synthesizer: SYNTH, extra })

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

const textOf = (result: CallToolResult, index = 0): string => {
  const block = result.content[index]
  return block?.type === "text" ? block.text : ""
}

interface Structured {
  readonly runId: string
  readonly status: string
  readonly final: string | null
  readonly runDir: string
  readonly summary: string
  readonly next?: string
  readonly files: Readonly<Record<string, string>>
  readonly candidates: ReadonlyArray<
    { model: string; status: string; latencyMs?: number; error?: { message: string; httpStatus?: number } }
  >
}

const structuredOf = (result: CallToolResult): Structured => result.structuredContent as unknown as Structured

const callTool = (
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { onprogress?: (p: Progress) => void; signal?: AbortSignal } = {}
) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...options }) as Promise<CallToolResult>

describe("MCP server (one server, several calls)", () => {
  let mcp: InProcessConnection
  const outputDir = freshDir()
  const logs: Array<{ level: string; data: unknown }> = []
  // A run that answered, made by the first test that needs it (each test stands alone, in any order).
  let answered: Promise<Structured> | undefined
  const answeredRun = () => (answered ??= callTool(mcp.client, "process_prompt", { prompt: "What is 2 + 2?" }).then(structuredOf))

  beforeAll(async () => {
    mcp = await connectMcpInProcess(envFor(outputDir))
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push({ level: n.params.level, data: n.params.data })
    })
  })
  afterAll(async () => {
    await mcp?.close()
  })

  it("lists the tools with object JSON Schemas for input and output", async () => {
    const { tools } = await mcp.client.listTools()
    expect(tools.map((t) => t.name)).toEqual([
      "process_prompt",
      "get_run",
      "continue_run",
      "cancel_run",
      "resynthesize",
      "list_runs",
      "list_models",
      "get_config"
    ])
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type ?? "object").toBe("object")
      expect(tool.description).toBeTruthy()
    }
    const pp = tools.find((t) => t.name === "process_prompt")!
    expect(pp.inputSchema.required).toEqual(["prompt"])
    expect(Object.keys(pp.inputSchema.properties ?? {}).sort()).toEqual([
      "deadline",
      "files",
      "grace",
      "models",
      "preset",
      "prompt",
      "quorum",
      "rounds",
      "samples",
      "strategy",
      "synthesizer",
      "wait",
      "web"
    ])
    expect(pp.inputSchema.additionalProperties).toBe(false)
    expect(pp.outputSchema?.required).toEqual(
      expect.arrayContaining(["runId", "status", "final", "summary", "runDir", "files", "candidates"])
    )
    // Read by a model: the answer and its disagreement report first, then the summary and the next step, then the facts.
    expect(Object.keys(pp.outputSchema?.properties ?? {}).slice(0, 4)).toEqual(["final", "summary", "next", "report"])
    expect(pp.execution).toEqual({ taskSupport: "optional" })
    // The byte sizes of the list are held in mcpToolList.test.ts.
    const candidates = ((pp.outputSchema?.properties ?? {}) as Record<string, { items: { required: Array<string> } }>)["candidates"]
    expect(candidates?.items.required).toEqual(expect.arrayContaining(["model", "status"]))
    expect(tools.find((t) => t.name === "resynthesize")!.inputSchema.required).toEqual(["runId"])
    for (const name of ["list_models", "get_config", "list_runs"]) {
      const tool = tools.find((t) => t.name === name)!
      expect(tool.inputSchema.required ?? []).toEqual([])
    }
    const { resourceTemplates } = await mcp.client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["parallel-llm://runs/{runId}/{file}"])
  })

  it("get_config shows the effective settings and never the API key; list_models the configured models", async () => {
    const config = await callTool(mcp.client, "get_config", {})
    expect(config.isError).toBeFalsy()
    const settings = config.structuredContent as Record<string, unknown>
    expect(settings.models).toEqual(MODELS)
    expect(settings.synthesizer).toBe(SYNTH)
    expect(settings.outputDir).toBe(outputDir)
    expect(settings.apiKey).toBe("<redacted>")
    expect(JSON.stringify(config)).not.toContain(API_KEY)
    expect(JSON.stringify(config)).not.toContain("MCP-SECRET")

    const models = await callTool(mcp.client, "list_models", {})
    expect(models.isError).toBeFalsy()
    const listing = models.structuredContent as {
      candidates: Array<string>
      synthesizer: string
      models: Array<{ id: string; role: string }>
    }
    expect(listing.candidates).toEqual(MODELS)
    expect(listing.synthesizer).toBe(SYNTH)
    expect(listing.models.map((m) => m.id)).toEqual([...MODELS, SYNTH])
    expect(JSON.stringify(models)).not.toContain(API_KEY)
  })

  it("list_models answers without the provider's list when it does not come within 15 s, and still lists the CLIs", async () => {
    // A provider that takes the connection and never answers; the server's clock is the test's.
    const silent = net.createServer(() => undefined)
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    const { port } = silent.address() as net.AddressInfo
    const baseUrl = `http://127.0.0.1:${port}/api/v1`
    const timed = await connectMcpInProcess(
      serverEnv({ baseUrl, outputDir: freshDir(), apiKey: API_KEY, models: MODELS, synthesizer: SYNTH }),
      undefined,
      { testClock: true }
    )
    try {
      const call = callTool(timed.client, "list_models", {})
      const clock = testClockOf(timed)
      await Effect.runPromise(clock.adjust(await pendingSleepBelow(clock, 16_000)))
      const result = await call
      expect(result.isError).toBeFalsy()
      const listing = result.structuredContent as { catalogueError?: string; agents?: Array<unknown>; models: Array<{ found: unknown }> }
      expect(listing.catalogueError).toBe("the provider's model list did not arrive within 15 seconds")
      expect(listing.agents).toHaveLength(3)
      expect(listing.models.map((m) => m.found)).toEqual([...MODELS, SYNTH].map(() => null))
      expect(textOf(result)).toContain("(Not checked against the provider: the provider's model list did not arrive within 15 seconds.)")
    } finally {
      await timed.close()
      silent.close()
    }
  })

  it("process_prompt answers with the final text, a summary, structured content with the files, and progress", async () => {
    const progress: Array<Progress> = []
    synthHeld.close()
    // Opened in any case: a later test's synthesis must not wait on this one's failure.
    const result = await callTool(mcp.client, "process_prompt", { prompt: "What is 2 + 2?" }, {
      onprogress: (p) => {
        progress.push(p)
        if ((p.message ?? "").includes("synthesizing")) synthHeld.open()
      }
    }).finally(() => synthHeld.open())

    expect(result.isError).toBeFalsy()
    expect(result.content[0]).toEqual({ type: "text", text: SYNTH_ANSWER })
    const run = structuredOf(result)
    expect(run.status).toBe("ok")
    expect(run.final).toBe(SYNTH_ANSWER)
    expect(run.runDir).toBe(path.join(outputDir, run.runId))
    expect(run.candidates.map((c) => [c.model, c.status])).toEqual(MODELS.map((m) => [m, "ok"]))
    for (const c of run.candidates) expect(typeof c.latencyMs).toBe("number")

    // Text only by default (some clients fail a whole call on a resource_link block); the files as URIs.
    expect(result.content.map((c) => c.type)).toEqual(["text", "text"])
    expect(textOf(result, 1)).toContain(`Run ${run.runId}: ok; 3/3 candidates answered`)
    expect(Object.keys(result.structuredContent ?? {}).slice(0, 2)).toEqual(["final", "summary"])
    expect(run.summary).toBe(textOf(result, 1))
    expect(run.files).toMatchObject({
      "final.md": `parallel-llm://runs/${run.runId}/final.md`,
      "responses/01-mcp-alpha.md": `parallel-llm://runs/${run.runId}/responses%2F01-mcp-alpha.md`,
      "responses/03-mcp-gamma.md": `parallel-llm://runs/${run.runId}/responses%2F03-mcp-gamma.md`,
      "run.json": `parallel-llm://runs/${run.runId}/run.json`
    })
    expect(JSON.stringify(result.structuredContent)).not.toContain("alpha says 4")

    // On disk, as the manifest says.
    expect(fs.readFileSync(path.join(run.runDir, "final.md"), "utf8")).toBe(SYNTH_ANSWER)
    expect(readManifest(run.runDir)?.status).toBe("ok")

    // Progress: strictly increasing, total set, one step per candidate and one as the synthesis starts.
    // (The last one, sent just before the result, is checked on the wire in the raw test below.)
    expect(progress.length).toBeGreaterThanOrEqual(MODELS.length + 2)
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress)
    for (const p of progress) expect(p.total).toBe(MODELS.length + 2)
    const messages = progress.map((p) => p.message ?? "")
    for (const model of MODELS) expect(messages.some((m) => /\d\/3 answered/.test(m) && m.includes(model))).toBe(true)
    expect(messages.some((m) => m.includes("synthesizing") && m.includes(SYNTH))).toBe(true)
    expect(messages.some((m) => m.includes(run.runId))).toBe(true)

    // Logs reached the client (no level set: everything the server logs).
    await waitFor("log notifications", () => logs.some((l) => String(l.data).includes(run.runId)))
    expect(JSON.stringify(logs)).not.toContain(API_KEY)
  })

  it("lists recent answers as resources and reads any run file, refusing paths outside the run", async () => {
    const run = await answeredRun()
    const { resources } = await mcp.client.listResources()
    const listed = resources.find((r) => r.uri === `parallel-llm://runs/${run.runId}/final.md`)
    expect(listed).toBeDefined()
    expect(listed!.mimeType).toBe("text/markdown")
    expect(listed!.description).toContain("What is 2 + 2?")

    const final = await mcp.client.readResource({ uri: `parallel-llm://runs/${run.runId}/final.md` })
    expect(final.contents[0]).toMatchObject({ text: SYNTH_ANSWER, mimeType: "text/markdown" })

    // A candidate's file, in the encoded form the server hands out and with a literal slash.
    const encoded = run.files["responses/02-mcp-beta.md"]!
    expect(encoded).toBe(`parallel-llm://runs/${run.runId}/responses%2F02-mcp-beta.md`)
    for (const uri of [encoded, `parallel-llm://runs/${run.runId}/responses/02-mcp-beta.md`]) {
      const read = await mcp.client.readResource({ uri })
      expect(read.contents[0]).toMatchObject({ uri, text: "beta says 4" })
    }
    const manifest = await mcp.client.readResource({ uri: `parallel-llm://runs/${run.runId}/run.json` })
    expect(manifest.contents[0]).toMatchObject({ mimeType: "application/json" })

    for (
      const uri of [
        `parallel-llm://runs/${run.runId}/..%2F..%2F..%2Fetc%2Fpasswd`,
        `parallel-llm://runs/${run.runId}/../../etc/passwd`,
        `parallel-llm://runs/..%2F${run.runId}/final.md`,
        "parallel-llm://runs/../final.md",
        `parallel-llm://runs/${run.runId}/responses%2F..%2F..%2Frun.json`,
        `parallel-llm://runs/${run.runId}/%2Fetc%2Fpasswd`,
        `file:///etc/passwd`
      ]
    ) {
      await expect(mcp.client.readResource({ uri }), uri).rejects.toThrow(/-32602/)
    }
    // Well formed but absent: "resource not found".
    await expect(mcp.client.readResource({ uri: "parallel-llm://runs/20000101-000000-000-00000000/final.md" })).rejects.toThrow(/-32002/)
    await expect(mcp.client.readResource({ uri: `parallel-llm://runs/${run.runId}/responses%2F09-nobody.md` })).rejects.toThrow(/-32002/)
  })

  it("list_runs lists the runs; resynthesize merges a run's answers again without asking the candidates", async () => {
    const run = await answeredRun()
    const listed = await callTool(mcp.client, "list_runs", { limit: 50 })
    expect(listed.isError).toBeFalsy()
    const runs = (listed.structuredContent as { runs: Array<{ runId: string; status: string; finalUri?: string; answered?: number }> }).runs
    const entry = runs.find((r) => r.runId === run.runId)
    expect(entry).toMatchObject({ status: "ok", answered: 3, finalUri: `parallel-llm://runs/${run.runId}/final.md` })

    const before = provider.fake.requests.filter((r) => MODELS.includes(r.model ?? "")).length
    const again = await callTool(mcp.client, "resynthesize", { runId: run.runId, synthesizer: "mcp/judge" })
    expect(again.isError).toBeFalsy()
    const rerun = structuredOf(again)
    expect(rerun.runId).not.toBe(run.runId)
    expect(rerun.candidates.map((c) => c.status)).toEqual(["ok", "ok", "ok"])
    expect(readManifest(rerun.runDir)).toMatchObject({ status: "ok" })
    expect(JSON.parse(fs.readFileSync(path.join(rerun.runDir, "run.json"), "utf8")).source).toBe(run.runId)
    expect(provider.fake.requests.filter((r) => MODELS.includes(r.model ?? "")).length).toBe(before)
    expect(provider.fake.requests.some((r) => r.model === "mcp/judge")).toBe(true)

    const unknown = await callTool(mcp.client, "resynthesize", { runId: "20200101-000000-000-00000000" })
    expect(unknown.isError).toBe(true)
    expect(textOf(unknown)).toMatch(/no run 20200101-000000-000-00000000/)
  })

  it("process_prompt takes a deadline: a straggler is cut and the answer still comes", async () => {
    // A server of its own on the TestClock: the deadline passes when the test moves the clock, once alpha has answered.
    const timed = await connectMcpInProcess(envFor(freshDir()), undefined, { testClock: true })
    const progress: Array<Progress> = []
    const call = callTool(timed.client, "process_prompt", {
      prompt: "deadline",
      models: ["mcp/alpha", "mcp/hang"],
      deadline: 1.5
    }, { onprogress: (p) => progress.push(p) })
    // Closed in any case: the worker's other test files share this process.
    const result = await (async () => {
      await waitFor("alpha's answer", () => progress.some((p) => (p.message ?? "").includes("1/2 answered (mcp/alpha in")))
      // Past the cut at 60 % of the deadline (0.9 s), short of the deadline, which the synthesis then has left.
      await Effect.runPromise(testClockOf(timed).adjust("1 second"))
      return await call
    })().finally(() => timed.close())
    expect(result.isError).toBeFalsy()
    const run = structuredOf(result)
    expect(run.status).toBe("partial")
    expect(run.candidates.map((c) => [c.model, c.status])).toEqual([["mcp/alpha", "ok"], ["mcp/hang", "cancelled"]])
    expect((run.candidates[1] as { reason?: string }).reason).toBe("deadline")
    expect(run.final).toBe(SYNTH_ANSWER)
  })

  it("refuses bad arguments with an isError result naming the field, and goes on serving", async () => {
    const before = provider.log().length
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "prompt"],
      [{ prompt: 42 }, "prompt"],
      [{ prompt: "   " }, "prompt"],
      [{ prompt: "hi", models: ["not a model id!"] }, "models[0]"],
      [{ prompt: "hi", models: [] }, "models"],
      [{ prompt: "hi", synthesizer: 7 }, "synthesizer"],
      [{ prompt: "hi", temperature: 0.2 }, "temperature"]
    ]
    for (const [args, field] of cases) {
      const result = await callTool(mcp.client, "process_prompt", args)
      expect(result.isError, JSON.stringify(args)).toBe(true)
      expect(textOf(result)).toContain(field)
      expect(textOf(result)).toMatch(/^Invalid arguments for process_prompt/)
    }
    const extra = await callTool(mcp.client, "get_config", { verbose: true })
    expect(extra.isError).toBe(true)
    expect(textOf(extra)).toContain("verbose")
    await expect(callTool(mcp.client, "no_such_tool", {})).rejects.toThrow(/Unknown tool: no_such_tool/)

    expect(provider.log().length).toBe(before) // nothing was asked
    const config = await callTool(mcp.client, "get_config", {})
    expect(config.isError).toBeFalsy()
  })

  it("runs five calls side by side, each in its own run directory", async () => {
    const prompts = [1, 2, 3, 4, 5].map((n) => `Concurrent question number ${n}`)
    provider.fake.reset()
    slow.close()
    const calls = Promise.all(
      prompts.map((prompt) => callTool(mcp.client, "process_prompt", { prompt, models: ["mcp/slow", "mcp/alpha"] }))
    )
    // mcp/slow is held until all five runs have asked it: runs made one after another would never get there.
    await waitFor(
      "five slow requests in flight at once",
      () => provider.fake.requests.filter((r) => r.model === "mcp/slow" && r.endedAt === undefined).length === 5
    )
    slow.open()
    const results = await calls
    const runs = results.map(structuredOf)
    for (const [i, result] of results.entries()) {
      expect(result.isError).toBeFalsy()
      expect(runs[i]!.status).toBe("ok")
      expect(fs.readFileSync(path.join(runs[i]!.runDir, "prompt.md"), "utf8")).toBe(prompts[i])
      expect(fs.readFileSync(path.join(runs[i]!.runDir, "responses", "01-mcp-slow.md"), "utf8")).toBe("slow but sure")
    }
    expect(new Set(runs.map((r) => r.runDir)).size).toBe(5)
    expect(new Set(runs.map((r) => r.runId)).size).toBe(5)
    // The five runs overlapped: more requests were in flight at once than one run makes.
    expect(provider.fake.maxInFlight).toBeGreaterThan(2)
  })

  it("cancels a call: in-flight requests aborted, finished answers kept, manifest cancelled", async () => {
    const controller = new AbortController()
    const progress: Array<Progress> = []
    const abortedBefore = provider.fake.abortedRequests().length
    const call = callTool(mcp.client, "process_prompt", { prompt: "Cancel me", models: ["mcp/alpha", "mcp/hang", "mcp/hang2"] }, {
      signal: controller.signal,
      onprogress: (p) => progress.push(p)
    })
    const runId = await waitFor("the run id in a progress message", () => progress.map((p) => runIdIn(p.message ?? "")).find(Boolean))
    await waitFor("alpha's answer", () => progress.some((p) => (p.message ?? "").includes("1/3 answered (mcp/alpha in")))
    await waitFor(
      "both hanging requests in flight",
      () => provider.fake.requests.filter((r) => r.model?.startsWith("mcp/hang") && r.endedAt === undefined).length === 2
    )
    controller.abort("test cancels")
    await expect(call).rejects.toThrow()

    const runDir = path.join(outputDir, runId)
    const manifest = await waitFor("the cancelled manifest", () => readManifest(runDir))
    expect(manifest.status).toBe("cancelled")
    expect(manifest.candidates.map((c) => [c.model, c.status])).toEqual([
      ["mcp/alpha", "ok"],
      ["mcp/hang", "cancelled"],
      ["mcp/hang2", "cancelled"]
    ])
    expect(fs.readFileSync(path.join(runDir, "responses", "01-mcp-alpha.md"), "utf8")).toBe("alpha says 4")
    expect(fs.existsSync(path.join(runDir, "final.md"))).toBe(false)
    const aborted = await waitFor("the fake to see both requests aborted", () => {
      const now = provider.fake.abortedRequests().slice(abortedBefore).filter((r) => r.model?.startsWith("mcp/hang"))
      return now.length === 2 ? now : undefined
    })
    expect(aborted.map((r) => r.model).sort()).toEqual(["mcp/hang", "mcp/hang2"])

    // Still serving.
    const config = await callTool(mcp.client, "get_config", {})
    expect(config.isError).toBeFalsy()
  })

  it("sends the client only the log levels it asked for", async () => {
    // A server of its own: the level a client sets holds for the rest of its session, and the other tests
    // expect every level.
    const quiet = await connectMcpInProcess(envFor(freshDir()))
    const logs: Array<{ level: string; data: unknown }> = []
    quiet.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push({ level: n.params.level, data: n.params.data })
    })
    try {
      await quiet.client.setLoggingLevel("warning")
      await quiet.client.ping() // whatever was logged before the new level arrives before this answer
      logs.length = 0
      const result = await callTool(quiet.client, "process_prompt", { prompt: "Quiet please", models: ["mcp/alpha", "fail/denied"] })
      expect(result.isError).toBeFalsy()
      await waitFor("the warning about the failed candidate", () => logs.some((l) => String(l.data).includes("fail/denied")))
      expect(logs.every((l) => l.level === "warning" || l.level === "error")).toBe(true)
    } finally {
      await quiet.close()
    }
  })
})

describe("MCP server: a run without an answer", () => {
  it("is an isError result naming every model's failure and where the files are", async () => {
    const outputDir = freshDir()
    // On the TestClock: the 429 model's backoff (50 ms) passes first, then, once the three others have failed, the
    // 1 s budget that ends the hanging call.
    const mcp = await connectMcpInProcess(
      envFor(outputDir, { PARALLEL_LLM_TIMEOUT: "1", PARALLEL_LLM_RETRIES: "1", PARALLEL_LLM_RETRY_BASE_DELAY: "0.05" }, [
        "fail/limited",
        "fail/denied",
        "fail/hang",
        "fail/echo"
      ]),
      undefined,
      { testClock: true }
    )
    const clock = testClockOf(mcp)
    const logs: Array<unknown> = []
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params)
    })
    try {
      const progress: Array<Progress> = []
      const call = callTool(mcp.client, "process_prompt", { prompt: "Nobody will answer" }, { onprogress: (p) => progress.push(p) })
      // The budgets are all 1 s ahead while the clock stands still: a shorter sleep is the backoff after the 429.
      await Effect.runPromise(clock.adjust(await pendingSleepBelow(clock, 1_000)))
      await waitFor("three candidates failed", () => progress.some((p) => p.progress >= 3))
      await Effect.runPromise(clock.adjust("1 second"))
      const result = await call
      expect(result.isError).toBe(true)
      const text = textOf(result)
      expect(text).toMatch(/^No answer from run \d{8}-\d{6}-\d{3}-[0-9a-f]{8}: no candidate answered \(failed after/)
      // One line per model's failure, then what to try next.
      expect(text).toMatch(/^- fail\/limited: HTTP 429.*$/m)
      expect(text).toMatch(/^- fail\/denied: HTTP 401.*$/m)
      expect(text).toMatch(/^- fail\/hang: Timed out.*$/m)
      expect(text).toMatch(/call process_prompt again/)
      const run = structuredOf(result)
      expect(run.status).toBe("failed")
      expect(run.final).toBeNull()
      expect(text).toContain(run.runDir)
      expect(run.candidates.find((c) => c.model === "fail/limited")?.error?.httpStatus).toBe(429)
      expect(readManifest(run.runDir)?.status).toBe("failed")
      expect(text).toMatch(/fail\/echo: HTTP 401: Invalid key\. Received API Key = <redacted>/)
      const manifest = await mcp.client.readResource({ uri: `parallel-llm://runs/${run.runId}/run.json` })
      for (const output of [result, progress, logs, manifest]) expect(JSON.stringify(output)).not.toContain(API_KEY)
    } finally {
      await mcp.close()
    }
  })
})
