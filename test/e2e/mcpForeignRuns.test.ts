import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectMcp, type McpConnection, runOutputOf, serverEnv } from "../support/mcpHarness.js"
import { startCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { useFakeOpenRouter } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// A run of another process (the built CLI, killed with SIGKILL), read by the built MCP server from disk: the
// processes are the point. The rest of get_run/cancel_run is unit/mcpRunHandles.test.ts's.

const API_KEY = "sk-or-v1-HANDLES-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
const SYNTH_ANSWER = "# Merged\n\nThe answer is **4**."

const { root: tmp } = tempRoot("pllm-foreign-")
const outputDir = path.join(tmp, "runs")

const provider = useFakeOpenRouter({
  script: {
    "fast/one": { kind: "ok", content: "fast one says 4", delayMs: 20 },
    "fast/synth": { kind: "ok", content: SYNTH_ANSWER, delayMs: 20 },
    "stuck/one": { kind: "hang" }
  }
})

/** Like the Codex app: a result with any block other than text fails the whole call. */
const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 }) as CallToolResult
  for (const block of result.content) {
    if (block.type !== "text") throw new Error(`Unexpected response type: ${block.type}`)
  }
  return result
}

const textOf = (result: CallToolResult) => result.content.map((b) => (b.type === "text" ? b.text : "")).join("\n")

describe("get_run and cancel_run", () => {
  let mcp: McpConnection
  beforeAll(async () => {
    mcp = await connectMcp(
      serverEnv({
        baseUrl: provider.fake.url,
        outputDir,
        apiKey: API_KEY,
        models: ["fast/one", "stuck/one", "stuck/two"],
        synthesizer: "fast/synth"
      })
    )
  })
  afterAll(async () => {
    await mcp?.close()
  })

  it("read runs of other processes from disk: a CLI run is running, then interrupted once killed; resynthesize recovers it", async () => {
    const env = serverEnv({
      baseUrl: provider.fake.url,
      outputDir,
      apiKey: API_KEY,
      models: ["fast/one", "stuck/one"],
      synthesizer: "fast/synth"
    })
    const before = new Set(fs.existsSync(outputDir) ? fs.readdirSync(outputDir) : [])
    const cli = startCli(["ask", "A question from the terminal"], { env })
    const runDir = await waitFor(
      "the CLI's first answer on disk",
      () =>
        (fs.existsSync(outputDir) ? fs.readdirSync(outputDir) : []).filter((id) => !before.has(id)).map((id) => path.join(outputDir, id))
          .find((dir) => fs.existsSync(path.join(dir, "responses", "01-fast-one.md")))
    )
    const runId = path.basename(runDir)

    const live = await call(mcp.client, "get_run", { runId, wait: 0 })
    expect(live.isError, textOf(live)).toBeFalsy()
    expect(runOutputOf(live)).toMatchObject({ runId, status: "running", final: null })
    expect(runOutputOf(live).summary).toContain(`(in process ${cli.child.pid} on ${os.hostname()})`)
    expect(runOutputOf(live).candidates.map((c) => c.status)).toEqual(["ok", "waiting"])
    const refused = await call(mcp.client, "cancel_run", { runId })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toContain(`belongs to process ${cli.child.pid}`)

    cli.child.kill("SIGKILL")
    await cli.done
    const dead = await call(mcp.client, "get_run", { runId, wait: 0 })
    expect(dead.isError).toBe(true)
    const interrupted = runOutputOf(dead)
    expect(interrupted).toMatchObject({ runId, status: "interrupted", final: null })
    expect(interrupted.candidates.map((c) => c.status)).toEqual(["ok", "cancelled"])
    expect(interrupted.next).toContain(`resynthesize with {"runId": "${runId}"}`)
    expect(textOf(dead)).toContain(`resynthesize with {"runId": "${runId}"}`)

    const recovered = runOutputOf(await call(mcp.client, "resynthesize", { runId }))
    expect(recovered).toMatchObject({ status: "partial", final: SYNTH_ANSWER, source: runId })
  })
})
