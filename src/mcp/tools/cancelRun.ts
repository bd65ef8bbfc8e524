import { Clock, Effect, Schema } from "effect"
import { errorResult, finishedResult } from "../results.js"
import { readRunView } from "../runView.js"
import { RunId } from "./fields.js"
import { resultOptions } from "./runs.js"
import { defineTool } from "./tool.js"

export const CancelRunInput = Schema.Struct({ runId: RunId })

export const cancelRunTool = defineTool({
  name: "cancel_run",
  title: "Cancel a running run",
  description: "Stops a run: model calls still going are aborted, answers received are kept (resynthesize merges them). " +
    "Returns the run's final state, like process_prompt.",
  input: CancelRunInput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  needs: ["settings", "outputDir"],
  run: (input, context) =>
    Effect.gen(function*() {
      const options = yield* resultOptions
      const view = yield* readRunView(context.runs, input.runId)
      switch (view._tag) {
        case "Finished":
          return errorResult(`Run ${input.runId} is not running: it already ended (${view.result.manifest.status}). get_run shows it.`)
        case "Running": {
          if (view.live === undefined) {
            return errorResult(`Run ${input.runId} belongs to ${view.elsewhere ?? "another process"}: it can only be cancelled there.`)
          }
          yield* view.live.cancel
          const after = yield* readRunView(context.runs, input.runId)
          if (after._tag !== "Finished") return errorResult(`Run ${input.runId} was cancelled, but its manifest could not be read.`)
          const now = yield* Clock.currentTimeMillis
          return yield* finishedResult(after, { ...options, note: `Cancelled at ${new Date(now).toISOString()}.`, noAnswerIsError: false })
        }
      }
    }).pipe(
      Effect.catchAll((e) =>
        Effect.succeed(errorResult(e._tag === "UnknownRun" ? e.message : `Run ${input.runId} could not be read: ${e.message}`))
      )
    )
})
