import { Deferred, Effect, Exit } from "effect"
import type { Readable, Writable } from "node:stream"
import { Settings } from "../services/settings.js"
import { logShutdown, openConnection, packageVersion } from "./connection.js"
import { makeLiveRuns } from "./liveRuns.js"
import { makeRedactor } from "./redact.js"
import { StdioTransport } from "./stdioTransport.js"

export interface ServeOptions {
  /** The transport's streams; the process's own by default. */
  readonly stdin?: Readable | undefined
  readonly stdout?: Writable | undefined
}

/**
 * The MCP server on stdio until the client goes away (stdin closes, stdout breaks, the transport closes)
 * or the process is interrupted (SIGINT/SIGTERM interrupt this fiber). The services, and with them the one
 * HTTP connection pool, are provided by the entry point and shared by every request and every run. On the
 * way out every request still waiting and every run still going is interrupted (HTTP calls aborted,
 * manifests written as `cancelled`) and awaited before `serveMcp` returns, so before the services close.
 */
export const serveMcp = Effect.fn("serveMcp")(function*(options: ServeOptions = {}) {
  const settings = yield* Settings
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const version = yield* packageVersion
  const redactor = makeRedactor(settings.apiKey)

  yield* Effect.gen(function*() {
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

    // Released after the connection: every run still going is interrupted and awaited (manifests written).
    const runs = yield* makeLiveRuns
    yield* openConnection(new StdioTransport(stdin, stdout), {
      version,
      runs,
      redactor,
      onClose: () => stop("the connection closed")
    })
    yield* Effect.logInfo(`MCP server ready on stdio; runs go to ${settings.outputDir}`)

    const reason = yield* Deferred.await(stopped).pipe(Effect.onInterrupt(() => logShutdown(runs, "interrupted")))
    yield* logShutdown(runs, reason)
  }).pipe(Effect.scoped)
})
