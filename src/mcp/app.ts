import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  type ListResourcesResult,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Effect, Either, Fiber, FiberSet, Runtime, Schema } from "effect"
import { readRunViewPage, rendersApps, RUN_VIEW_URI, runViewResource, toolUiMeta } from "./appView.js"
import type { LiveRuns } from "./liveRuns.js"
import { makeProgress } from "./progress.js"
import { listRunResources, readRunResource, resourceTemplates } from "./resources.js"
import { makeFileRoots } from "./roots.js"
import { makeTaskStore } from "./tasks.js"
import { appOnlyTools, toolNamed, tools } from "./tools/index.js"
import type { Tool, ToolServices } from "./tools/tool.js"
import { withToolCallSpan } from "./traceContext.js"

export const INSTRUCTIONS = "parallel-llm asks several LLMs the same prompt at once and has a synthesizer model merge their answers. " +
  "Call process_prompt with the full question. A run takes 1 to 3 minutes; when it is not done within `wait` seconds " +
  "the result says status \"running\" with a runId: call get_run with that runId (again while it says running) to get " +
  "the answer. The run goes on meanwhile and is never lost; cancel_run stops it, resynthesize merges a run's answers again. " +
  "continue_run asks a follow-up question of a finished run (the models see the conversation so far). " +
  "Every run's files are resources (parallel-llm://runs/{runId}/{file})."

/** A request that the protocol itself refuses (unknown tool, unknown or invalid resource URI). */
export interface ProtocolFailure {
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

export interface McpAppOptions {
  readonly version: string
  readonly runtime: Runtime.Runtime<ToolServices>
  /** The process's runs: shared by every connection, they outlive each request and each client. */
  readonly runs: LiveRuns
  /** Every request's fiber, interrupted and awaited when the connection closes. */
  readonly requests: FiberSet.FiberSet<unknown, unknown>
  /** Masks the API key in everything sent to the client. */
  readonly redact: <A>(value: A) => A
}

/**
 * What a client sees of the MCP App (appView.ts): it exists only for a client that declared it renders apps; for
 * any other the tool list, the results and the resource list are what they were before the app.
 */
const appViewOf = (server: Server) => {
  const apps = () => rendersApps(server.getClientCapabilities())
  const definitionOf = (tool: Tool) =>
    apps() && tool.ui !== undefined ? { ...tool.definition, _meta: toolUiMeta(tool.ui) } : tool.definition
  return {
    apps,
    listTools: () => ({ tools: [...tools, ...(apps() ? appOnlyTools : [])].map(definitionOf) }),
    listResources: <E, R>(list: Effect.Effect<ListResourcesResult, E, R>) =>
      apps() ? Effect.map(list, (result) => ({ ...result, resources: [runViewResource, ...result.resources] })) : list
  }
}

/**
 * The SDK's JSON Schema validator (Ajv with its formats), built when first asked for: the server asks only to check a
 * client's elicitation reply, and building it costs every connection 10-30 ms of CPU before its first answer.
 */
const validatorWhenNeeded = (): jsonSchemaValidator => {
  let ajv: AjvJsonSchemaValidator | undefined
  return { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) }
}

/** One MCP server (one per connection): tools, resources and tasks over the process's services and runs. */
export const makeMcpApp = (options: McpAppOptions): Server => {
  const { runtime, runs, requests, redact } = options
  const server = new Server(
    { name: "parallel-llm-mcp", title: "parallel-llm", version: options.version },
    {
      capabilities: {
        tools: {},
        resources: {},
        logging: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } }
      },
      instructions: INSTRUCTIONS,
      taskStore: makeTaskStore(runtime, runs, redact),
      jsonSchemaValidator: validatorWhenNeeded()
    }
  )

  /**
   * Runs one request's work on the shared services, in the request set. The SDK's abort signal fires on
   * `notifications/cancelled` and when the transport closes: it interrupts the work and waits for it.
   */
  const handle = async <A>(work: Effect.Effect<A, ProtocolFailure, ToolServices>, signal: AbortSignal): Promise<A> => {
    const outcome = await Runtime.runPromise(runtime)(
      Effect.gen(function*() {
        const fiber = yield* FiberSet.run(requests, Effect.either(work))
        return yield* Fiber.join(fiber).pipe(Effect.onInterrupt(() => Fiber.interrupt(fiber)))
      }),
      { signal }
    )
    if (Either.isLeft(outcome)) throw new ProtocolError({ code: outcome.left.code, message: redact(outcome.left.message) })
    return redact(outcome.right)
  }

  const fileRoots = makeFileRoots(server)
  const refuse = (message: string) => Effect.fail<ProtocolFailure>({ code: ErrorCode.InvalidParams, message })

  const view = appViewOf(server)
  server.setRequestHandler(ListToolsRequestSchema, view.listTools)
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    handle(
      Effect.gen(function*() {
        const { name, arguments: args, task } = request.params
        const tool = toolNamed(name, view.apps())
        if (tool === undefined) {
          return yield* refuse(`Unknown tool: ${name} (this server has ${tools.map((t) => t.name).join(", ")})`)
        }
        if (task !== undefined && !tool.tasks) return yield* refuse(`${name} does not run as a task; call it without "task"`)
        const progress = yield* makeProgress(extra._meta?.progressToken, (n) => extra.sendNotification(redact(n)))
        const context = { runs, progress, task: task === undefined ? undefined : { ttl: task.ttl }, fileRoots }
        return yield* withToolCallSpan(name, request.params._meta, tool.call(args, context))
      }),
      extra.signal
    ))
  server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => handle(view.listResources(listRunResources()), extra.signal))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [...resourceTemplates] }))
  server.setRequestHandler(
    ReadResourceRequestSchema,
    (request, extra) => handle(request.params.uri === RUN_VIEW_URI ? readRunViewPage : readRunResource(request.params.uri), extra.signal)
  )
  return server
}
