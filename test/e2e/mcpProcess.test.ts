import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type JsonRpcMessage, type RawServer, readManifest, runIdIn, serverEnv, spawnRawServer } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"
import { useFakeOpenRouter } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// The BUILT `node dist/main.js serve` as a process, driven by raw JSON-RPC lines on stdio against the loopback
// fake OpenRouter: what only a process shows (stdout holds nothing but JSON-RPC, stdin closing, SIGINT). What
// the server answers is unit/mcp.test.ts's, in-process.

const API_KEY = "sk-or-v1-MCP-SECRET-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
const MODELS = ["mcp/alpha", "mcp/beta", "mcp/gamma"]
const SYNTH = "mcp/synth"

const { root: tmp } = tempRoot("pllm-mcp-process-")
let dirCount = 0
const freshDir = () => path.join(tmp, `runs-${++dirCount}`)

const envFor = (outputDir: string, extra: Record<string, string> = {}) =>
  serverEnv({ baseUrl: provider.fake.url, outputDir, apiKey: API_KEY, models: MODELS, synthesizer: SYNTH, extra })

const provider = useFakeOpenRouter({
  script: {
    "mcp/alpha": { kind: "ok", content: "alpha says 4", delayMs: 50 },
    "mcp/beta": { kind: "ok", content: "beta says 4", delayMs: 100 },
    "mcp/gamma": { kind: "ok", content: "gamma says 4", delayMs: 150 },
    "mcp/synth": { kind: "ok", content: "# Merged\n\nAll three agree: **4**.", delayMs: 300 },
    "mcp/hang": { kind: "hang" }
  }
})

const isJsonRpc = (line: string): boolean => {
  try {
    const message = JSON.parse(line) as JsonRpcMessage
    return message.jsonrpc === "2.0" && (message.method !== undefined || message.id !== undefined)
  } catch {
    return false
  }
}

describe("MCP server process", () => {
  // One server for the malformed requests, then for SIGINT, which ends it: a process of its own for each cost a
  // start-up. The first test needs its own (debug logging, stdin closed).
  const outputDir = freshDir()
  let shared: Promise<RawServer> | undefined
  const sharedServer = () => (shared ??= spawnRawServer(envFor(outputDir)))
  afterAll(async () => {
    const server = await shared
    server?.child.kill("SIGTERM")
    await server?.exited
  })

  it("writes nothing but JSON-RPC on stdout; closing stdin cancels the run in flight and exits 0", async () => {
    const outputDir = freshDir()
    const server = await spawnRawServer(envFor(outputDir, { PARALLEL_LLM_LOG_LEVEL: "debug" }))
    await server.request("logging/setLevel", { level: "debug" })

    // A whole run, with progress and log notifications on the wire.
    const done = await server.request("tools/call", {
      name: "process_prompt",
      arguments: { prompt: "Full run" },
      _meta: { progressToken: "full" }
    })
    expect(done.result?.isError).toBeFalsy()
    expect(server.notifications().some((n) => n.method === "notifications/message")).toBe(true)
    // Every progress notification of the run is on the wire before the result, the last one at `total`.
    const fullProgress = server.notifications()
      .filter((n) => n.method === "notifications/progress" && n.params?.progressToken === "full")
      .map((n) => n.params as { progress: number; total: number; message: string })
    expect(fullProgress.map((p) => p.progress)).toEqual([0, 1, 2, 3, 4, 5])
    for (const p of fullProgress) expect(p.total).toBe(5)
    expect(fullProgress[4]!.message).toMatch(new RegExp(`: 3/3 answered \\(.*\\); synthesizing with ${SYNTH}; [\\d.]+ s so far$`))
    expect(fullProgress[5]!.message).toMatch(/^run \S+ ok in [\d.]+ s: 3\/3 answered$/)
    const responseLine = server.stdoutLines().findIndex((l) => l.includes(`"id":${String(done.id)}`) && l.includes("\"result\""))
    const lastProgressLine = server.stdoutLines().findIndex((l) => l.includes("\"progressToken\":\"full\"") && l.includes("\"progress\":5"))
    expect(lastProgressLine).toBeGreaterThanOrEqual(0)
    expect(lastProgressLine).toBeLessThan(responseLine)

    // A run that cannot finish, then the client goes away.
    server.send("tools/call", {
      name: "process_prompt",
      arguments: { prompt: "Never finishes", models: ["mcp/alpha", "mcp/hang"] },
      _meta: { progressToken: "hang" }
    })
    const progressOf = (token: string) =>
      server.notifications().filter((n) => n.method === "notifications/progress" && n.params?.progressToken === token).map((n) =>
        String(n.params?.message)
      )
    const runId = await waitFor("the run id", () => progressOf("hang").map(runIdIn).find(Boolean))
    await waitFor("alpha's answer", () => progressOf("hang").some((m) => m.includes("answered (mcp/alpha in")))
    server.child.stdin!.end()

    const exit = await Promise.race([
      server.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit after stdin closed:\n${server.stderr()}`)), 20_000))
    ])
    expect(exit).toEqual({ code: 0, signal: null })
    const manifest = readManifest(path.join(outputDir, runId))
    expect(manifest?.status).toBe("cancelled")
    expect(manifest?.candidates.map((c) => c.status)).toEqual(["ok", "cancelled"])
    expect(fs.existsSync(path.join(outputDir, runId, "responses", "01-mcp-alpha.md"))).toBe(true)

    const lines = server.stdoutLines()
    expect(lines.length).toBeGreaterThan(5)
    for (const line of lines) expect(isJsonRpc(line), line).toBe(true)
    expect(server.stderr()).toContain("MCP server ready")
    expect(server.stderr()).not.toContain(API_KEY)
    expect(lines.join("\n")).not.toContain(API_KEY)
  })

  it("answers every malformed request that has an id with -32602 and one line naming the field", async () => {
    const server = await sharedServer()
    const cases: Array<[string, Record<string, unknown> | undefined, string]> = [
      ["tools/call", {}, "params.name"],
      ["tools/call", { name: 42 }, "params.name"],
      ["tools/call", { name: "get_config", arguments: "x" }, "params.arguments"],
      ["resources/read", {}, "params.uri"],
      ["tasks/get", {}, "params.taskId"],
      ["tools/call", undefined, "params"]
    ]
    for (const [method, params, field] of cases) {
      const reply = await server.request(method, params)
      expect(reply.error, `${method} ${JSON.stringify(params)}`).toMatchObject({ code: -32602 })
      expect(reply.error?.message).toMatch(new RegExp(`^Invalid params: ${field.replace(/[.[\]]/g, "\\$&")}: `))
      expect(reply.error?.message).not.toContain("\n")
    }
    // Still serving.
    expect((await server.request("tools/list", {})).result?.tools).toBeDefined()
  })

  it("SIGINT cancels the runs in flight, writes their manifests and exits 130", async () => {
    const server = await sharedServer()
    server.send("tools/call", {
      name: "process_prompt",
      arguments: { prompt: "Interrupted", models: ["mcp/alpha", "mcp/hang"] },
      _meta: { progressToken: 1 }
    })
    const progress = () => server.notifications().filter((n) => n.method === "notifications/progress").map((n) => String(n.params?.message))
    const runId = await waitFor("the run id", () => progress().map(runIdIn).find(Boolean))
    await waitFor("alpha's answer", () => progress().some((m) => m.includes("answered (mcp/alpha in")))
    server.child.kill("SIGINT")
    const exit = await Promise.race([
      server.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit after SIGINT:\n${server.stderr()}`)), 20_000))
    ])
    expect(exit.code).toBe(130)
    const manifest = readManifest(path.join(outputDir, runId))
    expect(manifest?.status).toBe("cancelled")
    expect(manifest?.candidates.map((c) => c.status)).toEqual(["ok", "cancelled"])
    for (const line of server.stdoutLines()) expect(isJsonRpc(line), line).toBe(true)
  })
})
