import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { connectMcp, type JsonRpcMessage, serverEnv, spawnRawServer, waitFor } from "../support/mcpHarness.js"

// The MCP server over stdio (the built CLI) at the protocol's edges: raw JSON-RPC junk, and tasks of runs
// that this server does not own or whose files were edited.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-mcp-edges-"))
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

// No call reaches a provider in these tests: nothing listens there.
const envFor = (outputDir: string) =>
  serverEnv({
    baseUrl: "http://127.0.0.1:9/api/v1",
    outputDir,
    apiKey: "sk-or-v1-EDGES-0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    models: ["edge/one"],
    synthesizer: "edge/synth"
  })

const settings = { models: ["edge/one"], synthesizer: "edge/synth", concurrency: 5, timeoutMs: 1000, retries: 0 }

/** A run id made now, as the run store names run directories. */
const runIdNow = (suffix: string) => {
  const iso = new Date().toISOString()
  return `${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}-${iso.slice(20, 23)}-${suffix}`
}

describe("MCP over stdio: JSON-RPC junk", () => {
  it("answers each junk line with -32600/-32602 (its id when it has one), logs one short line, and goes on", async () => {
    const server = await spawnRawServer(envFor(path.join(tmp, "junk")))
    try {
      const junk: ReadonlyArray<readonly [unknown, string | number | null, number, string]> = [
        [{ jsonrpc: "1.0", id: 101, method: "ping" }, 101, -32600, `Invalid Request: jsonrpc must be "2.0"`],
        [{ jsonrpc: "2.0", id: 102, method: "ping", params: null }, 102, -32602, "Invalid params: params must be an object"],
        [{ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }, null, -32600, "Invalid Request: id must be a string or an integer"],
        [
          { jsonrpc: "2.0", id: 103, method: "ping", params: { _meta: { progressToken: { a: 1 } } } },
          103,
          -32602,
          "Invalid params: params._meta.progressToken must be a string or an integer"
        ],
        [
          [{ jsonrpc: "2.0", id: 104, method: "ping" }],
          104,
          -32600,
          "Invalid Request: a batch (JSON array) is not taken on stdio; send one message per line"
        ]
      ]
      const answers: Array<JsonRpcMessage> = []
      for (const [message, id, code, text] of junk) {
        const seen = server.stdoutLines().length
        server.child.stdin!.write(`${JSON.stringify(message)}\n`)
        const answer = await waitFor(`the answer to ${JSON.stringify(message)}`, () => {
          const line = server.stdoutLines().slice(seen).find((l) => l.includes(`"error"`))
          return line === undefined ? undefined : (JSON.parse(line) as JsonRpcMessage)
        })
        expect(answer).toEqual({ jsonrpc: "2.0", id, error: { code, message: text } })
        answers.push(answer)
      }
      // The connection still answers.
      expect((await server.request("ping")).result).toEqual({})
      const warnings = server.stderr().split("\n").filter((line) => line.includes("WARN"))
      expect(warnings).toHaveLength(junk.length)
      for (const line of warnings) expect(line.length).toBeLessThan(200)
      expect(server.stderr()).not.toMatch(/ZodError|"code": "invalid_/)
    } finally {
      server.child.kill("SIGTERM")
      await server.exited
    }
  })
})

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
    const mcp = await connectMcp(envFor(outputDir))
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
      JSON.stringify({
        id: "20250101-000000-000-e0e0e0e0",
        status: "ok",
        createdAt: "2025-01-01T00:00:00.000Z",
        finishedAt: "2025-01-01T00:00:01.000Z",
        durationMs: 1000,
        prompt: { chars: 1, sha256: "00" },
        settings,
        candidates: [{ model: "edge/one", status: "ok", attempts: 1, file: "responses/01-edge-one.md" }],
        usage: { promptTokens: 1, completionTokens: 1 }
      })
    )
    const mcp = await connectMcp(envFor(outputDir))
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
