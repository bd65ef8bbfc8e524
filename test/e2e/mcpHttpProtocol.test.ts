import { type CallToolResult, CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
import { serverEnv } from "../support/mcpHarness.js"
import { linesOf, runCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { useFakeOpenRouter } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// `serve --http` at its edges, the built CLI over loopback: what a refused request is told and what the
// server logs of it, JSON-RPC junk and batches, the Host header, a token that can never match, and when
// a session counts as idle.

const API_KEY = "sk-or-v1-EDGE-0f1e2d3c4b5a69788796a5b4c3d2e1f0"

const { root: tmp } = tempRoot("pllm-http-edges-")
let dirCount = 0
const freshDir = () => path.join(tmp, `runs-${++dirCount}`)

const envFor = (outputDir: string, extra: Record<string, string> = {}) =>
  serverEnv({ baseUrl: provider.fake.url, outputDir, apiKey: API_KEY, models: ["edge/one"], synthesizer: "edge/synth", extra })

const provider = useFakeOpenRouter({
  script: {
    "edge/one": { kind: "ok", content: "one says 4", delayMs: 20 },
    "edge/synth": { kind: "ok", content: "Merged: 4", delayMs: 20 },
    "edge/long": { kind: "ok", content: "long says 4", delayMs: 1_500 }
  }
})

interface JsonRpcError {
  readonly jsonrpc: string
  readonly id: unknown
  readonly error: { readonly code: number; readonly message: string }
}

/** A session opened by hand (initialize, then notifications/initialized): the headers its requests carry. */
const rawSession = async (server: HttpServer): Promise<Record<string, string>> => {
  const headers = { ...mcpPostHeaders, ...bearer(server.token) }
  const opened = await fetch(server.url, { method: "POST", headers, body: initializeBody })
  expect(opened.status).toBe(200)
  await opened.text()
  const session = { ...headers, "mcp-session-id": opened.headers.get("mcp-session-id") ?? "", "mcp-protocol-version": "2025-06-18" }
  const initialized = await fetch(server.url, {
    method: "POST",
    headers: session,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
  })
  expect(initialized.status).toBe(202)
  return session
}

const post = async (server: HttpServer, headers: Record<string, string>, body: unknown) => {
  const response = await fetch(server.url, { method: "POST", headers, body: JSON.stringify(body) })
  return { status: response.status, body: (await response.json()) as JsonRpcError }
}

const callTool = (id: number, prompt: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "process_prompt", arguments: { prompt } }
})

describe("serve --http at its edges", () => {
  let server: HttpServer
  const outputDir = freshDir()
  beforeAll(async () => {
    server = await startHttpServer(envFor(outputDir))
  })
  afterAll(async () => {
    await server?.stop()
  })

  it("says why a request is refused (401), logs each kind once, and tells no session about it", async () => {
    const mcp = await connectHttp(server.url, bearer(server.token))
    const logged: Array<string> = []
    mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logged.push(String(n.params.data))
    })
    try {
      await mcp.client.setLoggingLevel("debug")
      const attempt = (headers: Record<string, string>) =>
        fetch(server.url, { method: "POST", headers: { ...mcpPostHeaders, ...headers }, body: initializeBody })
      const missing = await attempt({})
      expect(missing.status).toBe(401)
      expect(missing.headers.get("www-authenticate")).toBe("Bearer")
      expect(await missing.json()).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32000, message: "Unauthorized: no bearer token; send Authorization: Bearer <token>" }
      })
      const wrongToken = `${server.token}x`
      const wrong = await attempt(bearer(wrongToken))
      expect(wrong.status).toBe(401)
      const wrongBody = await wrong.text()
      expect(JSON.parse(wrongBody)).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32000, message: "Unauthorized: the bearer token does not match the one the server printed when it started" }
      })
      expect(wrongBody).not.toContain(server.token)
      for (let i = 0; i < 4; i++) {
        expect((await attempt({})).status).toBe(401)
        expect((await attempt(bearer(wrongToken))).status).toBe(401)
      }

      // A run's own log lines still reach the session, after the refusals (one stream, in order).
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "Log me" } }, CallToolResultSchema, {
        timeout: 30_000
      }) as CallToolResult
      expect(result.isError).toBeFalsy()
      await waitFor("the run's log lines in the session", () => logged.some((line) => /\brun \d{8}-/.test(line)))
      expect(logged.filter((line) => line.includes("HTTP 401"))).toEqual([])

      const refusals = linesOf(server.cli.stderr()).filter((line) => line.includes("HTTP 401"))
      expect(refusals).toHaveLength(2)
      expect(refusals[0]).toMatch(/WARN {2}HTTP 401 for POST from 127\.0\.0\.1: Unauthorized: no bearer token; send/)
      expect(refusals[1]).toMatch(/WARN {2}HTTP 401 for POST from 127\.0\.0\.1: Unauthorized: the bearer token does not match/)
      expect(server.cli.stderr()).not.toContain(wrongToken)
    } finally {
      await mcp.close()
    }
  })

  it("refuses a Host that is not host[:port] (400) and says so once", async () => {
    const headers = { ...mcpPostHeaders, ...bearer(server.token) }
    for (const host of ["localhost:80@evil.example", "localhost:80@evil.example", "127.0.0.1:80:81"]) {
      const answer = await rawPost(server.url, { ...headers, host }, initializeBody)
      expect(answer.status, host).toBe(400)
      expect(JSON.parse(answer.body)).toMatchObject({ error: { message: "Bad Request: the Host header must be host[:port]" } })
    }
    // A path that does not exist is a 404, not a failure.
    expect((await fetch(`${server.base}/anything`, { headers: bearer(server.token) })).status).toBe(404)
    const lines = linesOf(server.cli.stderr()).filter((line) => line.includes("Host header"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).not.toContain("evil")
    expect(server.cli.stderr()).not.toMatch(/HTTP 500/)
  })

  it("answers JSON-RPC junk with -32600/-32602, with the request's id when it can, and one short line each", async () => {
    const session = await rawSession(server)
    const before = server.cli.stderr().length
    const junk = [
      [{ jsonrpc: "1.0", id: 7, method: "ping" }, 7, -32600, `Invalid Request: jsonrpc must be "2.0"`],
      [{ jsonrpc: "2.0", id: 8, method: "ping", params: null }, 8, -32602, "Invalid params: params must be an object"],
      [{ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }, null, -32600, "Invalid Request: id must be a string or an integer"],
      [
        { jsonrpc: "2.0", id: 9, method: "ping", params: { _meta: { progressToken: { a: 1 } } } },
        9,
        -32602,
        "Invalid params: params._meta.progressToken must be a string or an integer"
      ],
      // A response of the client's that is not one: refused, with nothing to answer it by.
      [{ jsonrpc: "2.0", id: 12, result: 5 }, null, -32600, "Invalid Request: result must be an object"],
      [
        [{ jsonrpc: "2.0", id: 10, method: "ping" }, 5],
        null,
        -32600,
        "Invalid Request: a message must be a JSON object (message [1] of the batch; the batch was not run)"
      ]
    ] as const
    for (const [body, id, code, message] of junk) {
      const answer = await post(server, session, body)
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual({ jsonrpc: "2.0", id, error: { code, message } })
    }
    // The session still works.
    const ping = await fetch(server.url, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", id: 11, method: "ping" })
    })
    expect(ping.status).toBe(200)
    expect(await ping.text()).toContain(`"id":11`)
    const logged = linesOf(server.cli.stderr().slice(before))
    expect(logged.filter((line) => line.includes("HTTP 400")).length).toBeGreaterThanOrEqual(1)
    for (const line of logged) expect(line.length).toBeLessThan(300)
  })

  it("refuses a batch holding the same request id twice, and starts nothing", async () => {
    const session = await rawSession(server)
    const asked = provider.fake.requests.length
    const answer = await post(server, session, [callTool(21, "Twice?"), callTool(21, "Twice!")])
    expect(answer.status).toBe(400)
    expect(answer.body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "Invalid Request: messages [0] and [1] of the batch are requests with the same id; the batch was not run"
      }
    })
    expect((await health(server.base)).runs).toBe(0)
    expect(provider.fake.requests.length).toBe(asked)
  })
})

describe("serve --http token and idle sessions", () => {
  // One server for the idle session, then for the refusals it counts until it stops: a process of its own for each
  // cost a start-up. The shortest idle time the setting takes (1 s), so the idle test waits as little as it can.
  let shared: Promise<HttpServer> | undefined
  const sharedServer = () => (shared ??= startHttpServer(envFor(freshDir()), ["--http-session-idle", "1"]))
  afterAll(async () => {
    await (await shared)?.stop()
  })

  it("refuses at start a token with whitespace, which could never match (exit 2, one line, never the token)", async () => {
    const token = "my secret token 0123456789\n"
    const result = await runCli(["serve", "--http", "--port", "0"], {
      env: envFor(freshDir(), { PARALLEL_LLM_HTTP_TOKEN: token }),
      timeoutMs: 20_000
    })
    expect(result.code).toBe(2)
    expect(linesOf(result.stderr)).toEqual([
      expect.stringMatching(/PARALLEL_LLM_HTTP_TOKEN has a space at character 3: a bearer token can hold only printable ASCII/)
    ])
    expect(result.stderr).not.toContain("secret")
  })

  it("counts a session's idle time from the end of its last request, not its start", async () => {
    const server = await sharedServer()
    const mcp = await connectHttp(server.url, bearer(server.token))
    // The call outlasts the idle time (1 s) by half of it, and the expiry check runs meanwhile (every 0.25 s).
    const result = await mcp.client.callTool(
      { name: "process_prompt", arguments: { prompt: "Take long", models: ["edge/long"] } },
      CallToolResultSchema,
      { timeout: 30_000 }
    ) as CallToolResult
    expect(result.isError).toBeFalsy()
    // Past two expiry checks after the call's end (counted from its start, the session would be gone by
    // then), within the idle time that began there.
    await new Promise((resolve) => setTimeout(resolve, 550))
    expect((await health(server.base)).sessions).toBe(1)
    const { tools } = await mcp.client.listTools()
    expect(tools.length).toBeGreaterThan(0)
    await mcp.close()
  })

  it("says on shutdown how many refusals it left out of the log", async () => {
    const server = await sharedServer()
    for (let i = 0; i < 3; i++) {
      expect((await fetch(server.url, { method: "POST", headers: mcpPostHeaders, body: initializeBody })).status).toBe(401)
    }
    const { stderr } = await server.stop()
    expect(linesOf(stderr).filter((line) => line.includes("no bearer token"))).toHaveLength(1)
    expect(stderr).toMatch(/WARN {2}HTTP: 2 more refused requests not logged \(one line a minute per kind\)/)
  })
})
