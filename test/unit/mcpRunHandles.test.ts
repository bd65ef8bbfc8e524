import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { type CallToolResult, CallToolResultSchema, type Progress } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { makeGate } from "../support/fakeOpenRouter.js"
import { connectMcpInProcess, type InProcessConnection } from "../support/inProcessMcp.js"
import { readManifest, runOutputOf, serverEnv } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"
import { waitFor } from "../support/waitFor.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Runs that outlive the request that started them: `wait`, get_run, cancel_run, MCP Tasks, and results
// that every client accepts. Every call goes through a STRICT client that, like the Codex app, fails on
// any content block that is not text. The server runs in this process over the SDK's in-memory transport
// (the stdio process is e2e/mcp.test.ts's); a run of another process is e2e/mcpForeignRuns.test.ts's.

const API_KEY = "sk-or-v1-HANDLES-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
const SYNTH_ANSWER = "# Merged\n\nThe answer is **4**."
const RUN_ID = /^\d{8}-\d{6}-\d{3}-[0-9a-f]{8}$/

/** The slow models answer only once a test opens this: until then a run of them is certainly still running. */
const slow = makeGate()
beforeEach(() => slow.close())

const provider = withFakeProvider({
  script: {
    "slow/one": { kind: "ok", content: "one says 4", until: slow.until },
    "slow/two": { kind: "ok", content: "two says 4", until: slow.until },
    "slow/synth": { kind: "ok", content: SYNTH_ANSWER, until: slow.until },
    "fast/one": { kind: "ok", content: "fast one says 4" },
    "fast/synth": { kind: "ok", content: SYNTH_ANSWER },
    "stuck/one": { kind: "hang" },
    "stuck/two": { kind: "hang" }
  }
})
const { root: tmp } = tempRoot("pllm-handles-")
let dirCount = 0
const freshDir = () => path.join(tmp, `runs-${++dirCount}`)

const connect = (outputDir: string, models: ReadonlyArray<string>, synthesizer: string, extra: Record<string, string> = {}) =>
  connectMcpInProcess(serverEnv({ baseUrl: provider.url, outputDir, apiKey: API_KEY, models, synthesizer, extra }))

/** Like the Codex app: a result with any block other than text fails the whole call. */
const strict = (result: CallToolResult): CallToolResult => {
  for (const block of result.content) {
    if (block.type !== "text") throw new Error(`Unexpected response type: ${block.type}`)
  }
  return result
}

const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: { timeout?: number; signal?: AbortSignal; onprogress?: (progress: Progress) => void } = {}
) => strict(await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000, ...options }) as CallToolResult)

const textOf = (result: CallToolResult) => result.content.map((b) => (b.type === "text" ? b.text : "")).join("\n")

describe("a run outlives the request that started it", () => {
  let mcp: InProcessConnection
  const outputDir = freshDir()
  beforeAll(async () => {
    mcp = await connect(outputDir, ["slow/one", "slow/two"], "slow/synth")
  })
  afterAll(async () => {
    await mcp?.close()
  })

  it("a client with a 2 s request timeout gets `running` within it, then the answer from get_run; the run is complete", async () => {
    // The slow models are held: the call can only answer because its wait (a hundredth of a second) ran out (a call that
    // waited for the run would hit the client's 2 s limit and fail), while the provider has answered nothing of it yet.
    // The fake is the file's: what other tests asked of it came before `since`.
    const since = provider.log().length
    const first = await call(mcp.client, "process_prompt", { prompt: "What is 2 + 2?", wait: 0.01 }, { timeout: 2_000 })
    expect(provider.log().slice(since).filter((r) => r.endedAt !== undefined)).toEqual([])
    expect(first.isError).toBeFalsy()
    const running = runOutputOf(first)
    expect(running.status).toBe("running")
    expect(running.final).toBeNull()
    expect(running.runId).toMatch(RUN_ID)
    expect(Object.keys(first.structuredContent ?? {}).slice(0, 3)).toEqual(["final", "summary", "next"])
    expect(running.next).toContain(`get_run with {"runId": "${running.runId}"}`)
    expect(textOf(first)).toContain("is still running")
    expect(textOf(first)).toContain(`get_run with {"runId": "${running.runId}"}`)
    expect(running.candidates.map((c) => c.status)).toEqual(["running", "running"])
    slow.open()

    // Polling as a client with the same 2 s limit would: get_run waits 1 s at a time until the answer comes.
    let result = first
    for (let i = 0; i < 20 && runOutputOf(result).status === "running"; i++) {
      result = await call(mcp.client, "get_run", { runId: running.runId, wait: 1 }, { timeout: 2_000 })
    }
    const done = runOutputOf(result)
    expect(done.status).toBe("ok")
    expect(done.final).toBe(SYNTH_ANSWER)
    expect(result.content[0]).toEqual({ type: "text", text: SYNTH_ANSWER })
    expect(fs.readdirSync(done.runDir).sort()).toEqual(["final.md", "prompt.md", "responses", "run.json"])
    expect(fs.readdirSync(path.join(done.runDir, "responses")).sort()).toEqual(["01-slow-one.md", "02-slow-two.md"])
    expect(readManifest(done.runDir)?.status).toBe("ok")
  })

  it("stopping get_run stops only the waiting: the run goes on and its answer comes", async () => {
    const first = runOutputOf(
      await call(mcp.client, "process_prompt", { prompt: "Keep going", models: ["slow/one"], synthesizer: "fast/synth", wait: 0 })
    )
    expect(first.status).toBe("running")
    const controller = new AbortController()
    const progress: Array<Progress> = []
    const waiting = call(mcp.client, "get_run", { runId: first.runId, wait: 30 }, {
      signal: controller.signal,
      onprogress: (p) => progress.push(p)
    })
    // Its first progress says the server is waiting on the run: the abort stops that wait, not a call yet to arrive.
    await waitFor("get_run waiting on the run", () => progress.length > 0)
    controller.abort("the user looked away")
    await expect(waiting).rejects.toThrow()
    slow.open()
    const done = runOutputOf(await call(mcp.client, "get_run", { runId: first.runId, wait: 20 }))
    expect(done.status).toBe("ok")
    expect(done.final).toBe(SYNTH_ANSWER)
  })
})

describe("get_run and cancel_run", () => {
  let mcp: InProcessConnection
  const outputDir = freshDir()
  beforeAll(async () => {
    mcp = await connect(outputDir, ["fast/one", "stuck/one", "stuck/two"], "fast/synth")
  })
  afterAll(async () => {
    await mcp?.close()
  })

  it("refuse run ids that are not runs here, and read nothing outside the runs directory", async () => {
    // A manifest-shaped file right beside the runs directory must never be what answers.
    fs.mkdirSync(path.join(path.dirname(outputDir), "x"), { recursive: true })
    fs.writeFileSync(path.join(path.dirname(outputDir), "x", "run.json"), JSON.stringify({ id: "x", status: "ok", final: "LEAKED" }))
    for (const runId of ["../x", "/etc/passwd", `${outputDir}/../x`, "20000101-000000-000-00000000", "", "..%2Fx"]) {
      for (const tool of ["get_run", "cancel_run"]) {
        const result = await call(mcp.client, tool, tool === "get_run" ? { runId, wait: 0 } : { runId })
        expect(result.isError, `${tool} ${runId}`).toBe(true)
        expect(textOf(result), `${tool} ${runId}`).toContain(JSON.stringify(runId))
        expect(textOf(result)).not.toContain("LEAKED")
      }
    }
  })

  it("cancel_run aborts every call still going, keeps the answers and returns the cancelled run; a second cancel is refused", async () => {
    const since = provider.fake.requests.length
    const running = runOutputOf(await call(mcp.client, "process_prompt", { prompt: "Cancel me", wait: 0 }))
    await waitFor(
      "both stuck requests in flight",
      () =>
        provider.fake.requests.slice(since).filter((r) => r.model?.startsWith("stuck/") && r.endedAt === undefined && !r.aborted)
          .length === 2
    )
    await waitFor("the fast answer on disk", () => fs.existsSync(path.join(running.runDir, "responses", "01-fast-one.md")))
    const abortedBefore = provider.fake.abortedRequests().length
    const result = await call(mcp.client, "cancel_run", { runId: running.runId })
    expect(result.isError).toBeFalsy()
    const cancelled = runOutputOf(result)
    expect(cancelled.status).toBe("cancelled")
    expect(cancelled.candidates.map((c) => c.status)).toEqual(["ok", "cancelled", "cancelled"])
    expect(cancelled.next).toContain("resynthesize")
    const aborted = await waitFor("the fake to see both aborts", () => {
      const now = provider.fake.abortedRequests().slice(abortedBefore)
      return now.length === 2 ? now : undefined
    })
    // A hanging request ends only when its client goes away: these two were aborted by the cancel, not answered.
    expect(aborted.map((r) => r.model).sort()).toEqual(["stuck/one", "stuck/two"])
    expect(readManifest(running.runDir)?.status).toBe("cancelled")
    expect(fs.readFileSync(path.join(running.runDir, "responses", "01-fast-one.md"), "utf8")).toBe("fast one says 4")

    const again = await call(mcp.client, "cancel_run", { runId: running.runId })
    expect(again.isError).toBe(true)
    expect(textOf(again)).toMatch(/not running: it already ended \(cancelled\)/)
    const shown = await call(mcp.client, "get_run", { runId: running.runId })
    expect(runOutputOf(shown).status).toBe("cancelled")
  })

  it("refuse more models than --max-models before any call, naming the setting", async () => {
    const before = provider.log().length
    const models = Array.from({ length: 17 }, (_, i) => `fast/m${i}`)
    const result = await call(mcp.client, "process_prompt", { prompt: "Too many", models })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain("17 candidate models, more than the 16 allowed in one run (--max-models)")
    expect(provider.log().length).toBe(before)
  })

  it("every other tool's results are text only too", async () => {
    for (const [name, args] of [["list_runs", {}], ["list_models", {}], ["get_config", {}], ["process_prompt", { prompt: "" }]] as const) {
      await call(mcp.client, name, args)
    }
  })
})

describe("resource links, when asked for", () => {
  it("come back as resource_link blocks with --resource-links", async () => {
    const mcp = await connect(freshDir(), ["fast/one"], "fast/synth", { PARALLEL_LLM_RESOURCE_LINKS: "true" })
    try {
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "Links please" } }) as CallToolResult
      const run = runOutputOf(result)
      const links = result.content.flatMap((b) => (b.type === "resource_link" ? [b.uri] : []))
      expect(links).toEqual(expect.arrayContaining(Object.values(run.files)))
      expect(links).toContain(`parallel-llm://runs/${run.runId}/final.md`)
    } finally {
      await mcp.close()
    }
  })
})

describe("MCP Tasks: a task is a run", () => {
  const outputDir = freshDir()

  it("a task-augmented call returns the task at once, then the same result as a plain call; tasks/result works after a restart", async () => {
    let mcp = await connect(outputDir, ["fast/one", "slow/one"], "fast/synth")
    let taskId = ""
    try {
      const seen: Array<string> = []
      let final: CallToolResult | undefined
      for await (
        const message of mcp.client.experimental.tasks.callToolStream(
          { name: "process_prompt", arguments: { prompt: "As a task" } },
          CallToolResultSchema,
          { task: { ttl: 60_000 }, timeout: 30_000 }
        )
      ) {
        seen.push(message.type)
        // The task came while slow/one was still held: only now may the run end. The client asks for the task
        // again only once this returns: it then finds the run completed (get_run waited for it) instead of waiting out the task's poll interval.
        if (message.type === "taskCreated") {
          taskId = message.task.taskId
          slow.open()
          await call(mcp.client, "get_run", { runId: taskId, wait: 30 })
        }
        if (message.type === "taskStatus") expect(["working", "completed"]).toContain(message.task.status)
        if (message.type === "result") final = strict(message.result)
        if (message.type === "error") throw message.error
      }
      expect(seen[0]).toBe("taskCreated")
      expect(taskId).toMatch(RUN_ID)
      expect(seen[seen.length - 1]).toBe("result")
      expect(runOutputOf(final!)).toMatchObject({ runId: taskId, status: "ok", final: SYNTH_ANSWER })
      expect(final!.content[0]).toEqual({ type: "text", text: SYNTH_ANSWER })
      expect((await mcp.client.experimental.tasks.getTask(taskId)).status).toBe("completed")
    } finally {
      await mcp.close()
    }

    // A new server on the same runs: the task is read from the run's files.
    mcp = await connect(outputDir, ["fast/one"], "fast/synth")
    try {
      const task = await mcp.client.experimental.tasks.getTask(taskId)
      expect(task).toMatchObject({ taskId, status: "completed", ttl: null })
      const result = strict(await mcp.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))
      expect(runOutputOf(result)).toMatchObject({ runId: taskId, status: "ok", final: SYNTH_ANSWER })
      const { tasks } = await mcp.client.experimental.tasks.listTasks()
      expect(tasks.map((t) => t.taskId)).toContain(taskId)
    } finally {
      await mcp.close()
    }
  })

  it("tasks/cancel cancels the run: the provider sees its requests aborted", async () => {
    const outputDir = freshDir()
    const mcp = await connect(outputDir, ["fast/one", "stuck/one"], "fast/synth")
    const since = provider.fake.requests.length
    try {
      const stream = mcp.client.experimental.tasks.callToolStream(
        { name: "process_prompt", arguments: { prompt: "Cancel the task" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 }, timeout: 30_000 }
      )
      const first = await stream.next()
      expect(first.value?.type).toBe("taskCreated")
      const taskId = first.value?.type === "taskCreated" ? first.value.task.taskId : ""
      await waitFor(
        "the stuck request in flight",
        () => provider.fake.requests.slice(since).some((r) => r.model === "stuck/one" && r.endedAt === undefined && !r.aborted)
      )
      await waitFor("the fast answer on disk", () => fs.existsSync(path.join(outputDir, taskId, "responses", "01-fast-one.md")))
      const abortedBefore = provider.fake.abortedRequests().length
      const cancelled = await mcp.client.experimental.tasks.cancelTask(taskId)
      expect(cancelled.status).toBe("cancelled")
      await waitFor(
        "the abort at the provider",
        () => provider.fake.abortedRequests().slice(abortedBefore).some((r) => r.model === "stuck/one")
      )
      const manifest = await waitFor("the cancelled manifest", () => readManifest(path.join(outputDir, taskId)))
      expect(manifest.status).toBe("cancelled")
      expect(manifest.candidates.map((c) => c.status)).toEqual(["ok", "cancelled"])
      await stream.return(undefined)
    } finally {
      await mcp.close()
    }
  })
})
