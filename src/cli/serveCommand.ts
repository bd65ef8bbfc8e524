import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { serveLayer } from "../AppLayer.js"
import { UsageError } from "../domain/errors.js"
import { serveMcpHttp } from "../mcp/http.js"
import { serveMcp } from "../mcp/server.js"
import { tools } from "../mcp/tools/index.js"
import { loadDegraded } from "../settings/degraded.js"
import { succeeded } from "./outcome.js"
import { rawFromFlags, type SettingsFlags, settingsOptions } from "./settingsOptions.js"

const DEFAULT_HOST = "127.0.0.1"
const DEFAULT_PORT = 8765

// Where `serve --http` listens: flags of `serve` alone, not settings (they would become flags of every command).
const serveOptions = {
  ...settingsOptions,
  http: Options.boolean("http").pipe(
    Options.withDescription("Serve MCP Streamable HTTP at /mcp (bearer token required; GET /healthz without) instead of stdio")
  ),
  host: Options.text("host").pipe(
    Options.withDescription(
      `With --http: the address to listen on. Default: ${DEFAULT_HOST}. Beyond loopback only with PARALLEL_LLM_HTTP_TOKEN set`
    ),
    Options.optional
  ),
  port: Options.integer("port").pipe(
    Options.withDescription(`With --http: the port (0: any free one, printed). Default: ${DEFAULT_PORT}`),
    Options.optional
  )
}

export const serveCommand = Command.make("serve", serveOptions).pipe(
  Command.withDescription(
    `Run as an MCP server on stdio (tools ${tools.map((tool) => tool.name).join(", ")}; every run's files as ` +
      "resources). A call waits for its run at most --mcp-wait seconds, then answers `running` with the run id. " +
      "Stdout carries only JSON-RPC; logs go to stderr, the log file and the MCP client. Ends when the client closes stdin. " +
      "With --http: the same over MCP Streamable HTTP for many clients at once, until SIGINT/SIGTERM."
  )
)

/**
 * `serve`'s services: it starts even when its settings cannot work (no key, a broken config file, an
 * output directory it cannot make), and says why in every call that needs what is missing. A bad flag
 * still stops it at once.
 */
export const serveServices = (args: SettingsFlags) =>
  serveLayer(Effect.flatMap(rawFromFlags(args), (raw) => loadDegraded({ ...raw, env: process.env })))

/** `serve`: until the client goes away (stdio) or the process is told to stop (HTTP). */
export const serve = Effect.fn("serve")(function*(args: Command.Command.ParseConfig<typeof serveOptions>) {
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
