import type { CallToolResult, CreateTaskResult, Task } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Deferred, Duration, Effect, Either } from "effect"
import type { StoreError } from "../../domain/errors.js"
import { formatSeconds } from "../../domain/format.js"
import type { RunEvent, RunResult } from "../../programs/run/request.js"
import { Settings } from "../../services/settings.js"
import type { LiveRun, RunFailure } from "../liveRuns.js"
import { errorResult, finishedResult, type ResultOptions, runningResult } from "../results.js"
import { liveView, type McpRunView, readRunView, type UnknownRun } from "../runView.js"
import type { ToolContext, ToolServices } from "./tool.js"

// What the run-shaped tools share: start a run that belongs to the server, wait for it a while, and
// answer with the run as it then stands.

/** How often a run of another process is looked at again while a call waits for it. */
const DISK_POLL = Duration.seconds(1)

export const resultOptions = Effect.map(Settings, (settings): ResultOptions => ({ resourceLinks: settings.resourceLinks }))

/** The tool result for a run as it stands. */
export const resultOfView = (view: McpRunView, options: ResultOptions, nowMs: number): Effect.Effect<CallToolResult> => {
  switch (view._tag) {
    case "Finished":
      return finishedResult(view, options)
    case "Running":
      return runningResult(view, nowMs - view.createdAt.getTime(), options)
  }
}

/** The task a task-augmented call answers with: task id = run id, for as long as the run's files exist. */
export const taskOf = (
  view: { readonly runId: string; readonly createdAt: Date },
  status: Task["status"],
  nowMs: number,
  statusMessage?: string
): Task => ({
  taskId: view.runId,
  status,
  // Runs are never deleted by a TTL: the task lives as long as the run's files.
  ttl: null,
  createdAt: view.createdAt.toISOString(),
  lastUpdatedAt: new Date(nowMs).toISOString(),
  pollInterval: 1000,
  ...(statusMessage !== undefined ? { statusMessage } : {})
})

const viewOrError = (context: ToolContext, runId: string) =>
  readRunView(context.runs, runId).pipe(
    Effect.mapError((e: UnknownRun | StoreError) =>
      errorResult(e._tag === "UnknownRun" ? e.message : `Run ${runId} could not be read: ${e.message}`)
    )
  )

/**
 * Waits up to `waitMs` for a run, reporting progress meanwhile, then answers with the run as it stands:
 * its result when it ended in time, a `running` result with its id otherwise.
 */
export const waitForRun = (context: ToolContext, runId: string, waitMs: number) =>
  Effect.gen(function*() {
    const options = yield* resultOptions
    const deadline = (yield* Clock.currentTimeMillis) + waitMs
    let view = yield* viewOrError(context, runId)
    let watched = false
    while (view._tag === "Running") {
      const left = deadline - (yield* Clock.currentTimeMillis)
      if (left <= 0) break
      const live = view.live
      if (live !== undefined) {
        watched = true
        yield* Effect.raceFirst(
          Deferred.await(live.done).pipe(Effect.ignore),
          Effect.sleep(Duration.millis(left))
        ).pipe(Effect.race(context.progress.watch(live)))
      } else {
        yield* Effect.sleep(Duration.min(DISK_POLL, Duration.millis(left)))
      }
      view = yield* viewOrError(context, runId)
    }
    if (watched && view._tag === "Finished") {
      const { manifest } = view.result
      yield* context.progress.finish(
        `run ${manifest.id} ${manifest.status} in ${formatSeconds(manifest.durationMs)}: ` +
          `${manifest.candidates.filter((c) => c.status === "ok").length}/${manifest.candidates.length} answered`
      )
    }
    return yield* resultOfView(view, options, yield* Clock.currentTimeMillis)
  }).pipe(Effect.merge)

/** `wait` in seconds as given, or the server's `mcpWait`; in milliseconds. */
export const waitMsOf = (wait: number | undefined) =>
  Effect.map(Settings, (settings) => (wait !== undefined ? Math.round(wait * 1000) : settings.mcpWaitMs))

/**
 * Starts a run that belongs to the server, then either answers with its task at once (a task-augmented
 * call) or waits for it. A cancel of the call while it waits cancels the run (the user stopped it);
 * a call that already answered `running` leaves the run alone.
 */
export const startToolRun = (
  context: ToolContext,
  wait: number | undefined,
  makeRun: (onEvent: (event: RunEvent) => Effect.Effect<void>) => Effect.Effect<RunResult, RunFailure, ToolServices>
): Effect.Effect<CallToolResult | CreateTaskResult, never, ToolServices> =>
  Effect.gen(function*() {
    const started = yield* Effect.either(context.runs.start(makeRun))
    if (Either.isLeft(started)) return errorResult(started.left.message)
    const live: LiveRun = started.right
    if (context.task !== undefined) {
      const view = yield* liveView(live)
      return { task: taskOf(view, "working", yield* Clock.currentTimeMillis) } satisfies CreateTaskResult
    }
    const waitMs = yield* waitMsOf(wait)
    return yield* waitForRun(context, live.runId, waitMs).pipe(Effect.onInterrupt(() => live.cancel))
  })

/** The store's failures of a run, as the message a model reads. */
export const runFailure = (e: { readonly _tag: string; readonly message: string }): RunFailure =>
  e._tag === "StoreError" ? { _tag: e._tag, message: `The run could not be stored: ${e.message}` } : { _tag: e._tag, message: e.message }
