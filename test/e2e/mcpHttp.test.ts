import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeGate } from "../support/fakeOpenRouter.js"
import {
  bearer,
  connectHttp,
  health,
  type HttpServer,
  initializeBody,
  mcpPostHeaders,
  rawPost,
  startHttpServer
} from "../support/httpHarness.js"
import { readManifest, runIdIn, runOutputOf, serverEnv } from "../support/mcpHarness.js"
import { runCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { useFakeOpenRouter } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// `serve --http`, the built CLI driven by the SDK's Streamable HTTP client: who may connect (token,
// Origin, Host), many clients on one process sharing its runs, cancellation, and shutdown.

const API_KEY = "sk-or-v1-HTTP-0f1e2d3c4b5a69788796a5b4c3d2e1f0"

/** http/slow answers only once the test opens this: until then its run is certainly still running. */
const slow = makeGate()
const { root: tmp } = tempRoot("pllm-http-")
let dirCount = 0
const freshDir = () => path.join(tmp, `runs-${++dirCount}`)

const envFor = (outputDir: string, extra: Record<string, string> = {}) =>
  serverEnv({ baseUrl: provider.fake.url, outputDir, apiKey: API_KEY, models: ["http/one", "http/two"], synthesizer: "http/synth", extra })

const provider = useFakeOpenRouter({
  script: {
    "http/one": { kind: "ok", content: "one says 4", delayMs: 20 },
    "http/two": { kind: "ok", content: "two says 4", delayMs: 20 },
    "http/synth": { kind: "ok", content: "Merged: 4", delayMs: 20 },
    "http/slow": { kind: "ok", content: "slow says 4", until: slow.until },
    "http/hang": { kind: "hang" },
    "http/hang2": { kind: "hang" }
  }
})

describe("serve --http", () => {
  let server: HttpServer
  const outputDir = freshDir()
  beforeAll(async () => {
    server = await startHttpServer(envFor(outputDir))
  })
  afterAll(async () => {
    await server?.stop()
  })

  it("prints the URL and a generated token once, on loopback", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(server.cli.stderr().split(server.token).length - 1).toBe(1)
  })

  it("answers GET /healthz without credentials", async () => {
    expect(await health(server.base)).toEqual({ status: "ok", sessions: expect.any(Number), runs: 0 })
  })

  it("refuses a client without the token or with a wrong one (401), accepts the right one", async () => {
    await expect(connectHttp(server.url, {})).rejects.toMatchObject({ code: 401 })
    await expect(connectHttp(server.url, bearer(`${server.token}x`))).rejects.toMatchObject({ code: 401 })
    const refused = await fetch(server.url, {
      method: "POST",
      headers: { ...mcpPostHeaders, authorization: "Bearer nope" },
      body: initializeBody
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toBe("Bearer")
    expect(await refused.text()).not.toContain(server.token)
    // Every path but GET /healthz needs the token.
    expect((await fetch(`${server.base}/anything`)).status).toBe(401)

    const mcp = await connectHttp(server.url, bearer(server.token))
    try {
      const { tools } = await mcp.client.listTools()
      expect(tools.map((t) => t.name)).toContain("process_prompt")
    } finally {
      await mcp.close()
    }
    expect(server.cli.stderr().split(server.token).length - 1).toBe(1)
  })

  it("refuses a foreign browser Origin (403) and, on loopback, a foreign Host (403)", async () => {
    const headers = { ...mcpPostHeaders, ...bearer(server.token) }
    const foreign = await fetch(server.url, {
      method: "POST",
      headers: { ...headers, origin: "https://evil.example" },
      body: initializeBody
    })
    expect(foreign.status).toBe(403)
    const local = await fetch(server.url, {
      method: "POST",
      headers: { ...headers, origin: "http://localhost:6274" },
      body: initializeBody
    })
    expect(local.status).toBe(200)
    expect(local.headers.get("access-control-allow-origin")).toBe("http://localhost:6274")
    await local.body?.cancel()
    const rebound = await rawPost(server.url, { ...headers, host: "evil.example" }, initializeBody)
    expect(rebound.status).toBe(403)
  })

  it("serves two clients at once, each its own session; DELETE /mcp ends one", async () => {
    const [a, b] = await Promise.all([connectHttp(server.url, bearer(server.token)), connectHttp(server.url, bearer(server.token))])
    try {
      expect(a.transport.sessionId).not.toBe(b.transport.sessionId)
      const before = (await health(server.base)).sessions
      const results = await Promise.all(
        [a, b].map((c, i) =>
          c.client.callTool({ name: "process_prompt", arguments: { prompt: `Question ${i}` } }, CallToolResultSchema, { timeout: 30_000 })
        )
      )
      for (const result of results) {
        expect(result.isError).toBeFalsy()
        expect(runOutputOf(result as CallToolResult).final).toBe("Merged: 4")
      }
      expect(new Set(results.map((r) => runOutputOf(r as CallToolResult).runId)).size).toBe(2)
      await a.transport.terminateSession()
      expect((await health(server.base)).sessions).toBe(before - 1)
      await expect(a.client.listTools()).rejects.toThrow()
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it("cancels a call: notifications/cancelled aborts the provider's requests, the manifest says cancelled", async () => {
    const mcp = await connectHttp(server.url, bearer(server.token))
    try {
      const controller = new AbortController()
      const messages: Array<string> = []
      const abortedBefore = provider.fake.abortedRequests().length
      const call = mcp.client.callTool(
        { name: "process_prompt", arguments: { prompt: "Cancel me", models: ["http/hang", "http/hang2"] } },
        CallToolResultSchema,
        {
          signal: controller.signal,
          timeout: 30_000,
          onprogress: (p) => messages.push(p.message ?? "")
        }
      )
      const runId = await waitFor("the run id in a progress message", () => messages.map(runIdIn).find(Boolean))
      await waitFor(
        "both hanging requests in flight",
        () => provider.fake.requests.filter((r) => r.model?.startsWith("http/hang") && r.endedAt === undefined).length === 2
      )
      controller.abort("test cancels")
      await expect(call).rejects.toThrow()
      const aborted = await waitFor("the fake to see both requests aborted", () => {
        const now = provider.fake.abortedRequests().slice(abortedBefore).filter((r) => r.model?.startsWith("http/hang"))
        return now.length === 2 ? now : undefined
      })
      expect(aborted.map((r) => r.model).sort()).toEqual(["http/hang", "http/hang2"])
      const manifest = await waitFor("the cancelled manifest", () => readManifest(path.join(outputDir, runId)))
      expect(manifest.status).toBe("cancelled")
    } finally {
      await mcp.close()
    }
  })

  it("finds a run started by one client from a second connection (get_run, tasks/get, resources)", async () => {
    const first = await connectHttp(server.url, bearer(server.token))
    const started = runOutputOf(
      await first.client.callTool({
        name: "process_prompt",
        arguments: { prompt: "Handle me", models: ["http/slow"], wait: 0 }
      }) as CallToolResult
    )
    expect(started.status).toBe("running")
    await first.close()
    expect((await health(server.base)).runs).toBe(1)

    const second = await connectHttp(server.url, bearer(server.token))
    try {
      const waiting = second.client.callTool({ name: "get_run", arguments: { runId: started.runId, wait: 30 } }, CallToolResultSchema, {
        timeout: 40_000
      })
      slow.open()
      const done = runOutputOf(await waiting as CallToolResult)
      expect(done.runId).toBe(started.runId)
      expect(done.final).toBe("Merged: 4")
      // Its task (task id = run id) and its files too.
      expect((await second.client.experimental.tasks.getTask(started.runId)).status).toBe("completed")
      const final = await second.client.readResource({ uri: `parallel-llm://runs/${started.runId}/final.md` })
      expect(final.contents[0]).toMatchObject({ text: "Merged: 4" })
    } finally {
      await second.close()
    }
  })
})

describe("serve --http limits", () => {
  it("bounds the body (413) and the sessions (503); idle sessions expire", async () => {
    const server = await startHttpServer(envFor(freshDir()), [
      "--http-max-sessions",
      "1",
      "--http-session-idle",
      "1",
      "--http-max-body",
      "2048"
    ])
    try {
      const headers = { ...mcpPostHeaders, ...bearer(server.token) }
      const big = await fetch(server.url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", pad: "x".repeat(4096) })
      })
      expect(big.status).toBe(413)

      const mcp = await connectHttp(server.url, bearer(server.token))
      await expect(connectHttp(server.url, bearer(server.token))).rejects.toMatchObject({ code: 503 })
      await waitFor("the idle session to expire", async () => (await health(server.base)).sessions === 0, 20_000, 50)
      await expect(mcp.client.listTools()).rejects.toMatchObject({ code: 404 })
      await mcp.close()
      // Its place is free again.
      const next = await connectHttp(server.url, bearer(server.token))
      await next.close()
    } finally {
      await server.stop()
    }
  })
})

describe("serve --http refusals and shutdown", () => {
  it("refuses a non-loopback address without PARALLEL_LLM_HTTP_TOKEN (exit 2, one line)", async () => {
    const result = await runCli(["serve", "--http", "--host", "0.0.0.0", "--port", "0"], { env: envFor(freshDir()) })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split("\n")).toHaveLength(1)
    expect(result.stderr).toMatch(/0\.0\.0\.0 is not a loopback address: set PARALLEL_LLM_HTTP_TOKEN/)
  })

  it("SIGTERM cancels the runs in flight, answers the calls waiting for them, writes the manifests, exits 130", async () => {
    const outputDir = freshDir()
    const token = "a-token-chosen-by-the-user-0123456789"
    const server = await startHttpServer(envFor(outputDir, { PARALLEL_LLM_HTTP_TOKEN: token }))
    expect(server.token).toBe(token)
    expect(server.cli.stderr()).not.toContain(token)
    const mcp = await connectHttp(server.url, bearer(token))
    const messages: Array<string> = []
    const waiting = mcp.client.callTool(
      { name: "process_prompt", arguments: { prompt: "Stop me", models: ["http/one", "http/hang"] } },
      CallToolResultSchema,
      { timeout: 15_000, onprogress: (p) => messages.push(p.message ?? "") }
    )
    const runId = await waitFor("the run id in a progress message", () => messages.map(runIdIn).find(Boolean))
    const runDir = path.join(outputDir, runId)
    await waitFor("one's answer on disk", () => fs.existsSync(path.join(runDir, "responses", "01-http-one.md")))
    const { code, stderr } = await server.stop()
    expect(code).toBe(130)
    expect(stderr).toContain("cancelling 1 run in flight")
    // The call waiting for the run was answered before its session closed.
    expect(runOutputOf(await waiting as CallToolResult).status).toBe("cancelled")
    const manifest = readManifest(runDir)
    expect(manifest?.status).toBe("cancelled")
    expect(manifest?.candidates.map((c) => c.status)).toEqual(["ok", "cancelled"])
    await mcp.close()
  })
})
