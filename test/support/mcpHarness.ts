import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { RunOutput } from "../../src/mcp/runOutput.js"
import { cliEntry, ensureBuilt, repoRoot, withCodeCache } from "./spawnCli.js"

// Drives the BUILT server (`node dist/main.js serve`) the way MCP clients do: the SDK's own Client over
// StdioClientTransport, or raw JSON-RPC lines over a child process when a test must see every byte.

/** The environment a client would pass: only what it lists, plus PATH and HOME. */
export const serverEnv = (options: {
  readonly baseUrl: string
  readonly outputDir: string
  readonly apiKey: string
  readonly models: ReadonlyArray<string>
  readonly synthesizer: string
  readonly extra?: Readonly<Record<string, string>>
}): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  OPENROUTER_BASE_URL: options.baseUrl,
  OPENROUTER_API_KEY: options.apiKey,
  PARALLEL_LLM_OUTPUT_DIR: options.outputDir,
  PARALLEL_LLM_MODELS: options.models.join(","),
  PARALLEL_LLM_SYNTHESIZER: options.synthesizer,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_RETRY_BASE_DELAY: "0.01",
  ...options.extra
})

/**
 * A server's environment for tests in which no call reaches a provider: nothing listens at its base URL (port 9,
 * discard), so a call that was sent would fail rather than answer.
 */
export const offlineServerEnv = (outputDir: string): Record<string, string> =>
  serverEnv({
    baseUrl: "http://127.0.0.1:9/api/v1",
    outputDir,
    apiKey: "sk-or-v1-EDGES-0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    models: ["edge/one"],
    synthesizer: "edge/synth"
  })

export interface McpConnection {
  readonly client: Client
  readonly transport: StdioClientTransport
  /** Everything the server wrote on stderr so far. */
  readonly stderr: () => string
  readonly close: () => Promise<void>
}

/** The built server behind the SDK's Client, connected and initialized. */
export const connectMcp = async (env: Record<string, string>): Promise<McpConnection> => {
  ensureBuilt()
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliEntry, "serve"],
    env: withCodeCache(env),
    cwd: repoRoot,
    stderr: "pipe"
  })
  let stderr = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const client = new Client({ name: "parallel-llm-tests", version: "1.0.0" })
  await client.connect(transport)
  return { client, transport, stderr: () => stderr, close: () => client.close() }
}

export interface JsonRpcMessage {
  readonly jsonrpc?: unknown
  readonly id?: number | string
  readonly method?: string
  readonly params?: Record<string, unknown>
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: number; readonly message: string }
}

export interface RawServer {
  readonly child: ChildProcess
  /** Every stdout line, as written. */
  readonly stdoutLines: () => ReadonlyArray<string>
  readonly stderr: () => string
  /** The parsed messages with a `method` (notifications and server requests). */
  readonly notifications: () => ReadonlyArray<JsonRpcMessage>
  readonly notify: (method: string, params?: Record<string, unknown>) => void
  /** Sends a request and resolves with its response (result or error). */
  readonly request: (method: string, params?: Record<string, unknown>) => Promise<JsonRpcMessage>
  /** Sends a request without waiting; returns its id. */
  readonly send: (method: string, params?: Record<string, unknown>) => number
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** The built server as a child process speaking raw JSON-RPC lines, initialized. */
export const spawnRawServer = async (env: Record<string, string>): Promise<RawServer> => {
  ensureBuilt()
  const child = spawn(process.execPath, [cliEntry, "serve"], { cwd: repoRoot, env: withCodeCache(env), stdio: ["pipe", "pipe", "pipe"] })
  const lines: Array<string> = []
  const notifications: Array<JsonRpcMessage> = []
  const waiting = new Map<number | string, (message: JsonRpcMessage) => void>()
  let stderr = ""
  let buffer = ""
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
  })
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk
    let newline = buffer.indexOf("\n")
    while (newline >= 0) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + 1)
      newline = buffer.indexOf("\n")
      lines.push(line)
      let message: JsonRpcMessage
      try {
        message = JSON.parse(line) as JsonRpcMessage
      } catch {
        continue // the test asserts on `stdoutLines`
      }
      if (message.method !== undefined) notifications.push(message)
      else if (message.id !== undefined) waiting.get(message.id)?.(message)
    }
  })
  child.stdin!.on("error", () => undefined)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }))
  })
  let nextId = 1
  const write = (message: Record<string, unknown>) => child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)
  const send = (method: string, params?: Record<string, unknown>) => {
    const id = nextId++
    write({ id, method, ...(params ? { params } : {}) })
    return id
  }
  const request = (method: string, params?: Record<string, unknown>) =>
    new Promise<JsonRpcMessage>((resolve, reject) => {
      const id = send(method, params)
      waiting.set(id, resolve)
      void exited.then(({ code, signal }) => reject(new Error(`server exited (${code ?? signal}) before answering ${method}:\n${stderr}`)))
    })
  const server: RawServer = {
    child,
    stdoutLines: () => lines,
    stderr: () => stderr,
    notifications: () => notifications,
    notify: (method, params) => write({ method, ...(params ? { params } : {}) }),
    request,
    send,
    exited
  }
  const init = await request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-test-client", version: "1.0.0" }
  })
  if (init.error) throw new Error(`initialize failed: ${init.error.message}`)
  server.notify("notifications/initialized")
  return server
}

export interface ManifestOnDisk {
  readonly id: string
  readonly status: string
  readonly candidates: ReadonlyArray<{ readonly model: string; readonly status: string; readonly file?: string }>
}

/** The run's manifest, once it is on disk. */
export const readManifest = (runDir: string): ManifestOnDisk | undefined => {
  const file = path.join(runDir, "run.json")
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as ManifestOnDisk) : undefined
}

/** The manifest of the one run under `runsDir` that has one, as written (every field the file holds). */
export const onlyManifestIn = (runsDir: string) => {
  const [id] = fs.readdirSync(runsDir).filter((f) => fs.existsSync(path.join(runsDir, f, "run.json")))
  if (id === undefined) throw new Error(`no run with a run.json in ${runsDir}`)
  return JSON.parse(fs.readFileSync(path.join(runsDir, id, "run.json"), "utf8"))
}

/** A run tool's structured result (process_prompt, get_run and the tools that return like them), as the server sent it. */
export const runOutputOf = (result: CallToolResult): RunOutput => result.structuredContent as unknown as RunOutput

/** The run id a progress message or log line mentions (`run 20250101-120000-000-abcdef12…`). */
export const runIdIn = (text: string): string | undefined => /\b(\d{8}-\d{6}-\d{3}-[0-9a-f]{8})\b/.exec(text)?.[1]
