import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as http from "node:http"
import { ensureBuilt, type RunningCli, startCli } from "./spawnCli.js"
import { waitFor } from "./waitFor.js"

// Drives the BUILT `serve --http` the way an HTTP MCP client does: the process spawned on a free port,
// its URL (and the token it generated) read from the line it prints, the SDK's own Client over
// StreamableHTTPClientTransport with the token in `requestInit.headers`.

export interface HttpServer {
  readonly cli: RunningCli
  /** `http://127.0.0.1:PORT/mcp` */
  readonly url: string
  /** `http://127.0.0.1:PORT` */
  readonly base: string
  /** The bearer token: PARALLEL_LLM_HTTP_TOKEN, or the one the server generated and printed. */
  readonly token: string
  /** Sends SIGTERM (if still running) and waits for the exit. */
  readonly stop: () => Promise<{ readonly code: number | null; readonly stderr: string }>
}

export const READY = /MCP over HTTP at (http:\/\/\S+\/mcp)(?:; send "Authorization: Bearer (\S+)")?/

/** `parallel-llm serve --http --port 0 ...args`, once it listens. */
export const startHttpServer = async (env: Record<string, string>, args: ReadonlyArray<string> = []): Promise<HttpServer> => {
  ensureBuilt()
  const cli = startCli(["serve", "--http", "--port", "0", ...args], { env, timeoutMs: 120_000 })
  let exited = false
  void cli.done.then(() => (exited = true))
  const ready = await waitFor("the server's URL on stderr", () => {
    if (exited) throw new Error(`serve --http exited before listening:\n${cli.stderr()}`)
    return READY.exec(cli.stderr()) ?? undefined
  })
  const url = ready[1]!
  const token = env.PARALLEL_LLM_HTTP_TOKEN ?? ready[2]
  if (token === undefined) throw new Error(`no token: ${cli.stderr()}`)
  return {
    cli,
    url,
    base: url.replace(/\/mcp$/, ""),
    token,
    stop: async () => {
      if (!exited) cli.child.kill("SIGTERM")
      const result = await cli.done
      return { code: result.code, stderr: result.stderr }
    }
  }
}

export interface HttpClient {
  readonly client: Client
  readonly transport: StreamableHTTPClientTransport
  readonly close: () => Promise<void>
}

/** The SDK's Client on the server's `/mcp`, with `headers` on every request; connected (initialized). */
export const connectHttp = async (url: string, headers: Record<string, string>): Promise<HttpClient> => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
  const client = new Client({ name: "parallel-llm-http-tests", version: "1.0.0" })
  await client.connect(transport)
  return { client, transport, close: () => client.close() }
}

export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` })

export interface Health {
  readonly status: string
  readonly sessions: number
  readonly runs: number
}

/** `GET /healthz`, without credentials. */
export const health = async (base: string): Promise<Health> => {
  const response = await fetch(`${base}/healthz`)
  if (response.status !== 200) throw new Error(`/healthz answered ${response.status}`)
  return (await response.json()) as Health
}

/** The JSON-RPC body of an `initialize`, as a client POSTs it to open a session. */
export const initializeBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

export const mcpPostHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** A raw HTTP request, for the headers fetch will not let a test set (Host). */
export const rawPost = (url: string, headers: Record<string, string>, body: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = http.request(url, { method: "POST", headers }, (response) => {
      let text = ""
      response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }))
    })
    request.on("error", reject)
    request.end(body)
  })
