import { Array as Arr, Cause, Effect, Ref, type Scope } from "effect"
import { collectCandidates } from "./run/candidates.js"
import { finalizeRun } from "./run/finalize.js"
import { stoppedBy } from "./run/outcome.js"
import type { RunRequest, RunResult } from "./run/request.js"
import { announceRun, startRun } from "./run/start.js"
import type { StartedRun } from "./run/started.js"
import { synthesizeAnswers } from "./run/synthesize.js"
import { withRunTrace } from "./runSpan.js"
import { aggregateAnswers } from "./strategies/registry.js"

/**
 * The whole pipeline: start the run, fan out under the policy, the strategy's step (rank, refine), synthesize
 * with failover, finalize. However it
 * ends, the manifest is written and every answer already received stays on disk (see run/writes.ts).
 */
export const runPipeline = (request: RunRequest) => Effect.scopedWith((scope) => runInScope(request, scope))

/** The pipeline in `scope`, which the run's files are written in (see startRun). */
const runInScope = Effect.fnUntraced(function*(request: RunRequest, scope: Scope.Scope) {
  const started = yield* startRun(request, scope)

  const steps = Effect.gen(function*() {
    yield* announceRun(started)
    const outcomes = yield* collectCandidates(started)
    const answered = outcomes.flatMap((o) => (o.content !== undefined ? [{ ...o, content: o.content }] : []))
    if (Arr.isNonEmptyReadonlyArray(answered)) {
      const aggregated = yield* aggregateAnswers(started, answered)
      yield* synthesizeAnswers(started, aggregated.answers, aggregated.ranking)
    } else yield* Effect.logError("no candidate answered: nothing to synthesize")
  })
  return yield* finishRun(started, steps)
})

/**
 * A started run's steps, then its manifest, however they end. Interrupted, or stopped by a failure of its own (its
 * manifest's included): the manifest says so, and keeps what was done. One mask for the run: its steps can be
 * interrupted, its manifest cannot.
 */
export const finishRun = Effect.fnUntraced(function*<E, R>(started: StartedRun, steps: Effect.Effect<void, E, R>) {
  const cut = <F>(cause: Cause.Cause<F>) => {
    const interrupted = Cause.isInterrupted(cause)
    return Effect.zipRight(
      finalizeRun(started, { interrupted, stopped: interrupted ? undefined : stoppedBy(cause) }),
      Effect.failCause(cause)
    )
  }
  const manifest = yield* withRunTrace(
    started,
    Effect.uninterruptibleMask((restore) =>
      Effect.matchCauseEffect(restore(steps), {
        onSuccess: () => Effect.catchAllCause(finalizeRun(started, { interrupted: false }), cut),
        onFailure: cut
      })
    )
  ).pipe(Effect.annotateLogs("run", started.run.id))
  const { final } = yield* Ref.get(started.state)
  return { manifest, final, runDir: started.run.dir } satisfies RunResult
})
