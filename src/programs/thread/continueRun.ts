import { Effect } from "effect"
import { plural } from "../../domain/format.js"
import type { RunRequest } from "../run/request.js"
import { runPipeline } from "../runPipeline.js"
import { threadFor } from "./readThread.js"

/**
 * A follow-up question to run `runId`: a new run whose candidates are sent the conversation so far (each
 * earlier turn's prompt and final answer) before the new prompt, and whose manifest names `runId` as its
 * parent. A run that cannot be continued is refused before anything is paid for.
 */
export const continueRun = Effect.fn("continueRun")(function*(runId: string, request: RunRequest) {
  const thread = yield* threadFor(runId)
  yield* Effect.logInfo(`following up on run ${runId}: ${plural(thread.turns.length, "earlier turn")} sent`)
  return yield* runPipeline({ ...request, thread })
})
