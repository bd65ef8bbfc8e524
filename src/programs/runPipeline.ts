import { Array as Arr, Effect, Exit, Ref } from "effect"
import { collectCandidates } from "./run/candidates.js"
import { finalizeRun } from "./run/finalize.js"
import { stoppedBy } from "./run/outcome.js"
import type { RunRequest, RunResult } from "./run/request.js"
import { announceRun, startRun } from "./run/start.js"
import { synthesizeAnswers } from "./run/synthesize.js"
import { aggregateAnswers } from "./strategies/aggregate.js"

export type { RunEvent, RunRequest, RunResult } from "./run/request.js"

/**
 * The whole pipeline: start the run, fan out under the policy, the strategy's step (rank, refine), synthesize
 * with failover, finalize. However it
 * ends, the manifest is written and every answer already received stays on disk (see run/writes.ts).
 */
export const runPipeline = Effect.fnUntraced(function*(request: RunRequest) {
  const started = yield* startRun(request)

  const manifest = yield* Effect.gen(function*() {
    yield* announceRun(started)
    const outcomes = yield* collectCandidates(started)
    const answered = outcomes.flatMap((o) => (o.content !== undefined ? [{ ...o, content: o.content }] : []))
    if (Arr.isNonEmptyReadonlyArray(answered)) {
      const aggregated = yield* aggregateAnswers(started, answered)
      yield* synthesizeAnswers(started, aggregated.answers, aggregated.ranking)
    } else yield* Effect.logError("no candidate answered: nothing to synthesize")
    return yield* Effect.uninterruptible(finalizeRun(started, { interrupted: false }))
  }).pipe(
    // Interrupted, or stopped by a failure of its own: the manifest says so, and keeps what was done.
    Effect.onExit((exit) =>
      Exit.isSuccess(exit)
        ? Effect.void
        : Effect.asVoid(finalizeRun(started, {
          interrupted: Exit.isInterrupted(exit),
          stopped: Exit.isInterrupted(exit) ? undefined : stoppedBy(exit.cause)
        }))
    ),
    Effect.annotateLogs("run", started.run.id)
  )
  const { final } = yield* Ref.get(started.state)
  return { manifest, final, runDir: started.run.dir } satisfies RunResult
}, Effect.scoped)
