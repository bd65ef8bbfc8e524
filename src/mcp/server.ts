import { FileSystem } from "@effect/platform"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Either, Exit, Fiber, FiberSet, Runtime, Schema } from "effect"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import { Logging } from "../services/Logging.js"
import type { OpenRouterClient } from "../services/OpenRouterClient.js"
import type { RunStore } from "../services/RunStore.js"
import { Settings } from "../services/Settings.js"
import { mcpLogSink } from "./logSink.js"
import { makeProgressReporter } from "./progress.js"
import { makeRedactor } from "./redact.js"
import { listRunResources, readRunResource, resourceTemplates } from "./resources.js"
import { callTool, toolDefinitions } from "./tools.js"

const INSTRUCTIONS =
  "parallel-llm asks several LLMs the same prompt at once and has a synthesizer model merge their answers. " +
  "Call process_prompt with the full question; it takes 1 to 3 minutes and reports progress when asked to. " +
  "Its result links every candidate's answer as a resource (parallel-llm://runs/{runId}/{file}); " +
  "resources/list shows the final answers of recent runs."

/** A request that the protocol itself refuses (unknown tool, unknown or invalid resource URI). */
interface ProtocolFailure {
  readonly code: number
  readonly message: string
}

/**
 * What a handler throws to answer with a JSON-RPC error: the SDK sends its `code` and `message` as they are
 * (the SDK's own McpError would prefix the message with "MCP error <code>:", which the client prefixes again).
 */
class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  code: Schema.Number,
  message: Schema.String
}) {}

/** What a request's work may use: the services the entry point provides to `serveMcp`. */
type RequestServices = Settings | OpenRouterClient | RunStore

export interface ServeOptions {
  /** The transport's streams; the process's own by default. */
  readonly stdin?: Readable | undefined
  readonly stdout?: Writable | undefined
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
 * HTTP connection pool, are provided by the entry point and shared by every request. On the way out every
 * request still running is interrupted (its HTTP calls aborted, its manifest written as `cancelled`) and
 * awaited before `serveMcp` returns, so before the services are closed.
 */
export const serveMcp = Effect.fn("serveMcp")(function*(options: ServeOptions = {}) {
  const settings = yield* Settings
  const logging = yield* Logging
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const server = new Server(
    { name: "parallel-llm-mcp", title: "parallel-llm", version: yield* packageVersion },
    { capabilities: { tools: {}, resources: {}, logging: {} }, instructions: INSTRUCTIONS }
  )
  let initialized = false
  server.oninitialized = () => {
    initialized = true
  }
  const redact = makeRedactor(settings.apiKey)

  yield* Effect.gen(function*() {
    // Log lines go to the client too while the server runs.
    yield* logging.addSink(mcpLogSink(server, () => initialized, redact.text))
    const runtime = yield* Effect.runtime<RequestServices>()
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

    // Released after the server closed: interrupts whatever still runs and waits for it (manifests written).
    const requests = yield* FiberSet.make<unknown, unknown>()

    /**
     * Runs one request's work on the shared services, in the request set. The SDK's abort signal fires on
     * `notifications/cancelled` and when the transport closes: it interrupts the work and waits for it.
     */
    const handle = async <A>(work: Effect.Effect<A, ProtocolFailure, RequestServices>, signal: AbortSignal): Promise<A> => {
      const outcome = await Runtime.runPromise(runtime)(
        Effect.gen(function*() {
          const fiber = yield* FiberSet.run(requests, Effect.either(work))
          return yield* Fiber.join(fiber).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
        }),
        { signal }
      )
      if (Either.isLeft(outcome)) throw new ProtocolError({ code: outcome.left.code, message: redact.text(outcome.left.message) })
      return redact.value(outcome.right)
    }

    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...toolDefinitions] }))
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      handle(
        makeProgressReporter(extra._meta?.progressToken, (notification) => extra.sendNotification(redact.value(notification))).pipe(
          Effect.flatMap((onEvent) => callTool(request.params.name, request.params.arguments, onEvent)),
          Effect.mapError((e) => ({ code: ErrorCode.InvalidParams, message: e.message }))
        ),
        extra.signal
      ))
    server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => handle(listRunResources(), extra.signal))
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [...resourceTemplates] }))
    server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => handle(readRunResource(request.params.uri), extra.signal))
    server.onclose = () => stop("the connection closed")
    server.onerror = (error) => Runtime.runFork(runtime)(Effect.logWarning(`MCP transport: ${error.message}`))

    // Released first: closing the server aborts every request's signal.
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(new StdioServerTransport(stdin, stdout))),
      () => Effect.promise(() => server.close())
    )
    yield* Effect.logInfo(`MCP server ready on stdio; runs go to ${settings.outputDir}`)

    const reason = yield* Deferred.await(stopped).pipe(
      Effect.onInterrupt(() =>
        FiberSet.size(requests).pipe(
          Effect.flatMap((n) => Effect.logInfo(`interrupted: shutting down${n > 0 ? `, cancelling ${n} request${n === 1 ? "" : "s"} in flight` : ""}`))
        )
      )
    )
    const inFlight = yield* FiberSet.size(requests)
    yield* Effect.logInfo(`${reason}: shutting down${inFlight > 0 ? `, cancelling ${inFlight} request${inFlight === 1 ? "" : "s"} in flight` : ""}`)
  }).pipe(Effect.scoped)
})
