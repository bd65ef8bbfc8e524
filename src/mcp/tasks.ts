import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js"
import { ErrorCode, McpError, type Result, type Task } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Effect, Runtime } from "effect"
import { stripControl } from "../domain/text.js"
import { RunStore } from "../services/runStore.js"
import type { LiveRuns } from "./liveRuns.js"
import { progressLine } from "./results.js"
import { type McpRunView, readRunView } from "./runView.js"
import { resultOfView, resultOptions, taskOf } from "./tools/runs.js"
import type { ToolServices } from "./tools/tool.js"

// MCP Tasks backed by the run store: a task IS a run (task id = run id), created by a task-augmented
// tools/call of process_prompt or resynthesize. Its status and result are read from the run itself — in
// memory while this server runs it, from its files otherwise — so tasks/get and tasks/result work for
// as long as the run's files exist, also after a restart. A requested TTL is honoured only as a minimum:
// runs are never deleted by it.

const PAGE = 20

const statusOf = (view: McpRunView): Task["status"] => {
  switch (view._tag) {
    case "Running":
      return "working"
    case "Finished": {
      const { status } = view.result.manifest
      return status === "ok" || status === "partial" ? "completed" : status === "cancelled" ? "cancelled" : "failed"
    }
  }
}

/** The task of the run `taskId` (the id asked for, which named its directory: never an id read from a file). */
const taskFor = (taskId: string, view: McpRunView, nowMs: number): Task => {
  switch (view._tag) {
    case "Running":
      return taskOf({ ...view, runId: taskId }, "working", nowMs, progressLine(view, nowMs - view.createdAt.getTime()))
    case "Finished": {
      const { manifest } = view.result
      return {
        ...taskOf({ runId: taskId, createdAt: new Date(manifest.createdAt) }, statusOf(view), Date.parse(manifest.finishedAt)),
        statusMessage:
          `${manifest.status}: ${manifest.candidates.filter((c) => c.status === "ok").length}/${manifest.candidates.length} answered` +
          (manifest.error !== undefined ? ` (${manifest.error})` : "")
      }
    }
  }
}

export const makeTaskStore = (runtime: Runtime.Runtime<ToolServices>, runs: LiveRuns, redact: <A>(value: A) => A): TaskStore => {
  const run = <A>(effect: Effect.Effect<A, never, ToolServices>): Promise<A> => Runtime.runPromise(runtime)(effect).then(redact)
  const view = (taskId: string) => readRunView(runs, taskId).pipe(Effect.option)
  return {
    createTask: () =>
      Promise.reject(new Error("a task is started by a task-augmented tools/call of process_prompt or resynthesize; its id is the run id")),
    getTask: (taskId) =>
      run(Effect.gen(function*() {
        const found = yield* view(taskId)
        return found._tag === "Some" ? taskFor(taskId, found.value, yield* Clock.currentTimeMillis) : null
      })),
    // A run's result is its own files: there is nothing else to store.
    storeTaskResult: () => Promise.resolve(),
    getTaskResult: (taskId) =>
      run(Effect.gen(function*() {
        const found = yield* view(taskId)
        if (found._tag === "None") return yield* Effect.die(new Error(`no run ${taskId}`))
        return (yield* resultOfView(found.value, yield* resultOptions, yield* Clock.currentTimeMillis)) satisfies Result
      })),
    // Only a cancel is acted on (tasks/cancel, after the SDK checked that the task is not over). A run of
    // another process cannot be stopped from here: the client is told so, and whose it is, instead of a
    // "cancelled" that the run would belie.
    updateTaskStatus: async (taskId, status) => {
      const elsewhere = await run(Effect.gen(function*() {
        if (status !== "cancelled") return undefined
        const live = yield* runs.get(taskId)
        if (live !== undefined) return yield* Effect.as(live.cancel, undefined)
        const found = yield* view(taskId)
        return found._tag === "Some" && found.value._tag === "Running" ? found.value.elsewhere ?? "another process" : undefined
      }))
      if (elsewhere === undefined) return
      const owner = stripControl(elsewhere)
      const how = "cancel it where it runs (cancel_run or tasks/cancel on the server that started it), or stop that process"
      throw new McpError(ErrorCode.InvalidParams, `Run ${taskId} belongs to ${owner}, not to this server, and goes on: ${how}`)
    },
    listTasks: (cursor) =>
      run(Effect.gen(function*() {
        const store = yield* RunStore
        const offset = cursor === undefined ? 0 : Math.max(0, Number.parseInt(cursor, 10) || 0)
        const listed = yield* store.listRuns(offset + PAGE + 1).pipe(Effect.orElseSucceed(() => []))
        const page = listed.slice(offset, offset + PAGE)
        const now = yield* Clock.currentTimeMillis
        const tasks = yield* Effect.forEach(page, (summary) =>
          view(summary.id).pipe(Effect.map((found) => (found._tag === "Some" ? [taskFor(summary.id, found.value, now)] : []))))
        return { tasks: tasks.flat(), ...(listed.length > offset + PAGE ? { nextCursor: String(offset + PAGE) } : {}) }
      }))
  }
}
