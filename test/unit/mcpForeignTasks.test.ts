import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { manifestOf } from "../support/manifestOf.js"
import { offlineServerEnv } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"

// MCP tasks of runs that this server does not own, or whose files were edited: the server `serve` starts, in this
// process (the stdio process at the protocol's edges is e2e/mcpProtocolEdges.test.ts's).

const { root: tmp } = tempRoot("pllm-mcp-foreign-tasks-")
const settings = { models: ["edge/one"], synthesizer: "edge/synth", concurrency: 5, timeoutMs: 1000, retries: 0 }

/** A run id made now, as the run store names run directories. */
const runIdNow = (suffix: string) => {
  const iso = new Date().toISOString()
  return `${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}-${iso.slice(20, 23)}-${suffix}`
}

describe("MCP tasks of runs this server does not own", () => {
  it("refuses tasks/cancel of another process's run, naming that process; the run is not marked cancelled", async () => {
    const outputDir = path.join(tmp, "elsewhere")
    const runId = runIdNow("e1e2e3e4")
    fs.mkdirSync(path.join(outputDir, runId, "responses"), { recursive: true })
    const now = new Date().toISOString()
    fs.writeFileSync(
      path.join(outputDir, runId, "owner.json"),
      JSON.stringify({ pid: 4242, host: "build-box.elsewhere", processStartedAt: now, createdAt: now, settings })
    )
    const mcp = await connectMcpInProcess(offlineServerEnv(outputDir))
    try {
      expect((await mcp.client.experimental.tasks.getTask(runId)).status).toBe("working")
      await expect(mcp.client.experimental.tasks.cancelTask(runId)).rejects.toThrow(
        `Run ${runId} belongs to process 4242 on build-box.elsewhere, not to this server, and goes on`
      )
      expect((await mcp.client.experimental.tasks.getTask(runId)).status).toBe("working")
      expect(fs.existsSync(path.join(outputDir, runId, "run.json"))).toBe(false)
    } finally {
      await mcp.close()
    }
  })

  it("takes a task's id from its run directory, not from an id edited into run.json", async () => {
    const outputDir = path.join(tmp, "edited")
    const runId = "20250101-000000-000-abcdef12"
    fs.mkdirSync(path.join(outputDir, runId, "responses"), { recursive: true })
    fs.writeFileSync(path.join(outputDir, runId, "responses", "01-edge-one.md"), "one says 4")
    fs.writeFileSync(path.join(outputDir, runId, "final.md"), "Merged: 4")
    fs.writeFileSync(
      path.join(outputDir, runId, "run.json"),
      JSON.stringify(manifestOf("20250101-000000-000-e0e0e0e0", {
        settings,
        candidates: [{ model: "edge/one", status: "ok", attempts: 1, file: "responses/01-edge-one.md" }],
        usage: { promptTokens: 1, completionTokens: 1 }
      }))
    )
    const mcp = await connectMcpInProcess(offlineServerEnv(outputDir))
    try {
      const task = await mcp.client.experimental.tasks.getTask(runId)
      expect(task).toMatchObject({ taskId: runId, status: "completed" })
      const listed = await mcp.client.experimental.tasks.listTasks()
      expect(listed.tasks.map((t) => t.taskId)).toEqual([runId])
      expect(JSON.stringify(await mcp.client.callTool({ name: "get_run", arguments: { runId } }))).not.toContain("e0e0e0e0")
    } finally {
      await mcp.close()
    }
  })
})
