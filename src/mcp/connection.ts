import { FileSystem } from "@effect/platform"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect, FiberSet, Runtime, Schema, type Scope } from "effect"
import { fileURLToPath } from "node:url"
import { Logging } from "../services/logging.js"
import { makeMcpApp } from "./app.js"
import type { LiveRuns } from "./liveRuns.js"
import { mcpLogSink, serverOnly } from "./logSink.js"
import type { Redactor } from "./redact.js"
import type { ToolServices } from "./tools/tool.js"

// What the stdio server and the HTTP server share: the version they announce, one MCP connection's
// lifecycle over any SDK transport, and the shutdown line.

const PackageJson = Schema.parseJson(Schema.Struct({ version: Schema.String }))

/** The package's version, for the `initialize` answer. */
export const packageVersion = FileSystem.FileSystem.pipe(
  Effect.flatMap((fs) => fs.readFileString(fileURLToPath(new URL("../../package.json", import.meta.url)))),
  Effect.flatMap(Schema.decodeUnknown(PackageJson)),
  Effect.map((pkg) => pkg.version),
  Effect.orElseSucceed(() => "0.0.0")
)

export interface ConnectionOptions {
  readonly version: string
  /** The process's runs, shared by every connection. */
  readonly runs: LiveRuns
  readonly redactor: Redactor
  /** Called once the connection is closed from its side (the client went away, the transport closed). */
  readonly onClose: () => void
}

export interface Connection {
  readonly server: Server
  /** Whether a request is still being answered. */
  readonly busy: Effect.Effect<boolean>
}

/**
 * One MCP connection on `transport`: its own SDK Server (makeMcpApp) over the shared services and runs,
 * until the scope closes. Closing it closes the server first (every request's signal aborts), then
 * stops sending log lines to the client, then interrupts whatever request still waits and waits for it.
 * The runs that the connection started are not its own: they go on.
 */
export const openConnection = (
  transport: Transport,
  options: ConnectionOptions
): Effect.Effect<Connection, never, Scope.Scope | ToolServices | Logging> =>
  Effect.gen(function*() {
    const logging = yield* Logging
    // Whatever region this is opened in (an HTTP session is opened in an uninterruptible acquire), the
    // requests run interruptible: a timeout or a cancel must be able to interrupt them.
    const runtime = yield* Effect.interruptible(Effect.runtime<ToolServices>())
    const requests = yield* FiberSet.make<unknown, unknown>()
    const server = makeMcpApp({ version: options.version, runtime, runs: options.runs, requests, redact: options.redactor.value })
    let initialized = false
    server.oninitialized = () => {
      initialized = true
    }
    // Log lines go to the client too while the connection is open.
    yield* logging.addSink(mcpLogSink(server, () => initialized, options.redactor.text))
    server.onclose = options.onClose
    // A transport's complaint (a refused message) is for the server's log, not for every client's session.
    server.onerror = (error) => Runtime.runFork(runtime)(serverOnly(Effect.logWarning(`MCP transport: ${error.message}`)))
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.promise(() => server.close())
    )
    return { server, busy: Effect.map(FiberSet.size(requests), (n) => n > 0) }
  })

const runsInFlight = (n: number) => (n > 0 ? `, cancelling ${n} run${n === 1 ? "" : "s"} in flight` : "")

/** Logs why the server stops and how many runs that cancels (the scope's close then cancels them). */
export const logShutdown = (runs: LiveRuns, reason: string) =>
  Effect.flatMap(runs.size, (n) => Effect.logInfo(`${reason}: shutting down${runsInFlight(n)}`))
