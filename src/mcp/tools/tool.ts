import type { FileSystem, Path } from "@effect/platform"
import type { CallToolResult, CreateTaskResult, Tool as ToolDefinition, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, type Schema } from "effect"
import type { ModelClient } from "../../services/modelClient.js"
import type { RunStore } from "../../services/runStore.js"
import type { Settings } from "../../services/settings.js"
import { type Need, StartupProblems } from "../../settings/degraded.js"
import type { ToolUi } from "../appView.js"
import type { LiveRuns } from "../liveRuns.js"
import type { Progress } from "../progress.js"
import { errorResult } from "../results.js"
import type { FileRoots, RootsUnavailable } from "../roots.js"
import { decodeArguments, objectJsonSchema } from "./arguments.js"

/** What a tool's handler needs from the services of the process (the platform's file system: attached files). */
export type ToolServices = Settings | RunStore | ModelClient | FileSystem.FileSystem | Path.Path

/** What a tool call carries besides its arguments. */
export interface ToolContext {
  readonly runs: LiveRuns
  readonly progress: Progress
  /** The call asked to run as an MCP task (`params.task`): answer with the task at once. */
  readonly task: { readonly ttl: number | undefined } | undefined
  /** Where this connection's calls may read attached files from (the client's roots, see roots.ts). */
  readonly fileRoots: Effect.Effect<FileRoots, RootsUnavailable, ToolServices>
}

export type ToolReply = CallToolResult | CreateTaskResult

/** One tool, declared once: `tools/list`, argument decoding and dispatch all come from this record. */
export interface ToolSpec<A, I> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<A, I>
  /**
   * The schema of `structuredContent`; every successful result matches it (clients check). Left out where
   * it would repeat another tool's (the tool list goes into every conversation): the description says so.
   */
  readonly output?: Schema.Schema.AnyNoContext
  readonly annotations: ToolAnnotations
  /**
   * What the tool cannot work without. A server that started without one of them (see settings/degraded.ts)
   * answers each call with what is missing and how to fix it, instead of running the tool.
   */
  readonly needs: ReadonlyArray<Need>
  /** Whether a call may ask to run as an MCP task. */
  readonly tasks?: boolean
  /** Its part in the MCP App, for clients that render apps (appView.ts): shows the run page, or is the page's own. */
  readonly ui?: ToolUi
  readonly run: (input: A, context: ToolContext) => Effect.Effect<ToolReply, never, ToolServices>
}

export interface Tool {
  readonly name: string
  readonly definition: ToolDefinition
  readonly tasks: boolean
  readonly ui: ToolUi | undefined
  /** Decodes the arguments (a bad one is an `isError` result naming the field) and runs the tool. */
  readonly call: (args: unknown, context: ToolContext) => Effect.Effect<ToolReply, never, ToolServices>
}

export const defineTool = <A, I>(spec: ToolSpec<A, I>): Tool => ({
  name: spec.name,
  tasks: spec.tasks === true,
  ui: spec.ui,
  definition: {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: objectJsonSchema(spec.input),
    ...(spec.output !== undefined ? { outputSchema: objectJsonSchema(spec.output, { descriptions: false }) } : {}),
    annotations: spec.annotations,
    ...(spec.tasks === true ? { execution: { taskSupport: "optional" as const } } : {})
  },
  call: (args, context) =>
    Effect.flatMap(StartupProblems, (problems) => {
      const missing = problems.find((problem) => spec.needs.includes(problem.blocks))
      return missing !== undefined
        ? Effect.succeed(errorResult(`${spec.name} cannot run: ${missing.message}`))
        : decodeArguments(spec.name, spec.input, args).pipe(
          Effect.matchEffect({
            onFailure: (e) => Effect.succeed(errorResult(e.message)),
            onSuccess: (input) => spec.run(input, context)
          })
        )
    }).pipe(
      // A defect is a result the model can read, and a log line; interruption is left alone (a run
      // interrupted by a cancel records itself as cancelled).
      Effect.catchAllDefect((defect) =>
        Effect.logError(`${spec.name}: internal error`, Cause.die(defect)).pipe(
          Effect.as(errorResult(`Internal error in ${spec.name}: ${Cause.pretty(Cause.die(defect)).split("\n")[0] ?? "unknown"}`))
        )
      ),
      Effect.annotateLogs("tool", spec.name)
    )
})
