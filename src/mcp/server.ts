import { FileSystem } from "@effect/platform"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Exit, FiberSet, Runtime, Schema } from "effect"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import { Logging } from "../services/Logging.js"
import { Settings } from "../services/Settings.js"
import { makeMcpApp } from "./app.js"
import { makeLiveRuns } from "./liveRuns.js"
import { mcpLogSink } from "./logSink.js"
import { readableErrors } from "./protocolErrors.js"
import { makeRedactor } from "./redact.js"
import type { ToolServices } from "./tools/tool.js"

export interface ServeOptions {
  /** The transport's streams; the process's own by default. */
  readonly stdin?: Readable | undefined
  readonly stdout?: Writable | undefined
}

/** The stdio transport, with a readable error for every request whose params are malformed. */
class StdioTransport extends StdioServerTransport {
  override send(message: JSONRPCMessage): Promise<void> {
    return super.send(readableErrors(message))
  }
}

const PackageJson = Schema.parseJson(Schema.Struct({ version: Schema.String }))

const packageVersion = FileSystem.FileSystem.pipe(
  Effect.flatMap((fs) => fs.readFileString(fileURLToPath(new URL("../../package.json", import.meta.url)))),
  Effect.flatMap(Schema.decodeUnknown(PackageJson)),
  Effect.map((pkg) => pkg.version),
  Effect.orElseSucceed(() => "0.0.0")
)

/**
 * The MCP server on stdio until the client goes away (stdin closes, stdout breaks, the transport closes)
 * or the process is interrupted (SIGINT/SIGTERM interrupt this fiber). The services, and with them the one
 * HTTP connection pool, are provided by the entry point and shared by every request and every run. On the
 * way out every request still waiting and every run still going is interrupted (HTTP calls aborted,
 * manifests written as `cancelled`) and awaited before `serveMcp` returns, so before the services close.
 */
export const serveMcp = Effect.fn("serveMcp")(function*(options: ServeOptions = {}) {
  const settings = yield* Settings
  const logging = yield* Logging
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const version = yield* packageVersion
  const redact = makeRedactor(settings.apiKey)

  yield* Effect.gen(function*() {
    const runtime = yield* Effect.runtime<ToolServices>()
    const stopped = yield* Deferred.make<string>()
    const stop = (reason: string) => {
      Deferred.unsafeDone(stopped, Exit.succeed(reason))
    }
    // Released last: the stream listeners (stdout may still fail while the server closes).
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const onEnd = () => stop("the client closed stdin")
        const onStdoutError = (error: Error) => stop(`stdout failed (${error.message})`)
        stdin.on("end", onEnd)
        stdin.on("close", onEnd)
        stdout.on("error", onStdoutError)
        return { onEnd, onStdoutError }
      }),
      ({ onEnd, onStdoutError }) =>
        Effect.sync(() => {
          stdin.off("end", onEnd)
          stdin.off("close", onEnd)
          stdout.off("error", onStdoutError)
          // Nothing of the connection may keep the process alive once the server is done.
          stdin.destroy()
        })
    )

    // Released after the requests: every run still going is interrupted and awaited (manifests written).
    const runs = yield* makeLiveRuns
    // Released after the server closed: interrupts whatever request still waits, and waits for it.
    const requests = yield* FiberSet.make<unknown, unknown>()
    const server = makeMcpApp({ version, runtime, runs, requests, redact: redact.value })
    let initialized = false
    server.oninitialized = () => {
      initialized = true
    }
    // Log lines go to the client too while the server runs.
    yield* logging.addSink(mcpLogSink(server, () => initialized, redact.text))
    server.onclose = () => stop("the connection closed")
    server.onerror = (error) => Runtime.runFork(runtime)(Effect.logWarning(`MCP transport: ${error.message}`))

    // Released first: closing the server aborts every request's signal.
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(new StdioTransport(stdin, stdout))),
      () => Effect.promise(() => server.close())
    )
    yield* Effect.logInfo(`MCP server ready on stdio; runs go to ${settings.outputDir}`)

    const reason = yield* Deferred.await(stopped).pipe(
      Effect.onInterrupt(() =>
        runs.size.pipe(
          Effect.flatMap((n) => Effect.logInfo(`interrupted: shutting down${n > 0 ? `, cancelling ${n} run${n === 1 ? "" : "s"} in flight` : ""}`))
        )
      )
    )
    const inFlight = yield* runs.size
    yield* Effect.logInfo(`${reason}: shutting down${inFlight > 0 ? `, cancelling ${inFlight} run${inFlight === 1 ? "" : "s"} in flight` : ""}`)
  }).pipe(Effect.scoped)
})
