import { Effect, Option } from "effect"
import { UsageError } from "../domain/errors.js"
import { serveMcpHttp } from "../mcp/http.js"
import { serveMcp } from "../mcp/server.js"
import { tools } from "../mcp/tools/index.js"
import { defineCommand, integerFlag, type ParsedArgs, switchFlag, textFlag } from "./flags.js"
import { succeeded } from "./outcome.js"

const DEFAULT_HOST = "127.0.0.1"
const DEFAULT_PORT = 8765

// Where `serve --http` listens: flags of `serve` alone, not settings (no other command needs them).
export const serveCli = defineCommand("serve", {
  summary: "Run as an MCP server (stdio, or HTTP with --http)",
  details: `Tools: ${tools.map((tool) => tool.name).join(", ")}; every run's files as resources. A call waits for its ` +
    "run at most --mcp-wait seconds, then answers `running` with the run id. Stdout carries only JSON-RPC; logs go " +
    "to stderr, the log file and the MCP client. Ends when the client closes stdin, or with --http on SIGINT/SIGTERM.",
  args: {},
  flags: {
    http: switchFlag({
      name: "http",
      doc: "Serve MCP Streamable HTTP at /mcp (bearer token required; GET /healthz without), and the run viewer at /runs, instead of stdio."
    }),
    host: textFlag({
      name: "host",
      value: "address",
      doc: `With --http: the address to listen on (default ${DEFAULT_HOST}); beyond loopback only with PARALLEL_LLM_HTTP_TOKEN set.`
    }),
    port: integerFlag({ name: "port", value: "port", doc: `With --http: the port (default ${DEFAULT_PORT}; 0: any free one, printed).` })
  },
  settings: "serve"
})

export const serveCommand = serveCli.command

/** `serve`: until the client goes away (stdio) or the process is told to stop (HTTP). */
export const serve = Effect.fn("serve")(function*(args: ParsedArgs<typeof serveCli>) {
  if (!args.http) {
    if (Option.isSome(args.host) || Option.isSome(args.port)) return yield* new UsageError({ message: "--host and --port go with --http" })
    yield* serveMcp()
    return succeeded
  }
  const port = Option.getOrElse(args.port, () => DEFAULT_PORT)
  if (port < 0 || port > 65_535) return yield* new UsageError({ message: `--port must be a whole number from 0 to 65535, got ${port}` })
  yield* serveMcpHttp({ host: Option.getOrElse(args.host, () => DEFAULT_HOST), port })
  return succeeded
})
