import { Clock, Effect, Ref } from "effect"
import type { StoreError } from "../domain/errors.js"
import { roundUsd } from "../domain/format.js"
import type { FinishedRunStatus } from "../domain/manifest.js"

// The progress of a batch, or of an eval (which runs its pairs as a batch runs its prompts), and the result lines
// appended to the results file as each run ends: a line is written before it is counted, so the count never
// claims a result the file does not hold.

export interface BatchProgress {
  /** Prompts this pass runs (answered ones skipped), and invalid lines. */
  readonly total: number
  readonly ok: number
  readonly partial: number
  readonly failed: number
  readonly cancelled: number
  /** Already answered in an earlier pass. */
  readonly skipped: number
  readonly invalid: number
  readonly inFlight: number
  readonly cost: number
  /** Runs that ended without the provider reporting what they cost: `cost` then leaves them out. */
  readonly unknownCost: number
  readonly elapsedMs: number
}

export const remainingOf = (p: BatchProgress): number => p.total - p.ok - p.partial - p.failed - p.cancelled

/** The progress before anything has run. */
export const progressAtStart = (start: { readonly total: number; readonly skipped: number }): BatchProgress => ({
  ...start,
  ok: 0,
  partial: 0,
  failed: 0,
  cancelled: 0,
  invalid: 0,
  inFlight: 0,
  cost: 0,
  unknownCost: 0,
  elapsedMs: 0
})

/** What the progress reads of a result line. */
interface CountedResult {
  readonly status: FinishedRunStatus
  readonly cost: number | null
  /** Null when no run was made: there is no cost to know. */
  readonly runDir: string | null
}

export interface ProgressRecorderOptions<P extends BatchProgress, R extends CountedResult> {
  readonly start: P
  readonly appendLine: (result: R) => Effect.Effect<void, StoreError>
  /** What a kind of progress counts beyond the statuses and the cost (a batch's invalid lines, an eval's correct answers). */
  readonly tally: (progress: P, result: R) => P
  readonly onProgress?: ((progress: P, last: R | undefined) => Effect.Effect<void>) | undefined
}

export type ProgressRecorder<P extends BatchProgress, R extends CountedResult> = Effect.Effect.Success<
  ReturnType<typeof makeProgressRecorder<P, R>>
>

/** The progress, and the result lines appended as each run ends. */
export const makeProgressRecorder = <P extends BatchProgress, R extends CountedResult>(
  options: ProgressRecorderOptions<P, R>
) =>
  Effect.gen(function*() {
    const startedMs = yield* Clock.currentTimeMillis
    const progress = yield* Ref.make<P>(options.start)
    const report = (last: R | undefined) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const p = yield* Ref.updateAndGet(progress, (p) => ({ ...p, elapsedMs: now - startedMs }))
        if (options.onProgress) yield* options.onProgress(p, last)
      })
    // A run that ends leaves the runs in flight in the same update that counts it: no report sees it in neither.
    const counted = (result: R, ended: 0 | 1) =>
      Ref.update(progress, (p) =>
        options.tally({
          ...p,
          [result.status]: p[result.status] + 1,
          inFlight: p.inFlight - ended,
          cost: roundUsd(p.cost + (result.cost ?? 0)),
          unknownCost: p.unknownCost + (result.cost === null && result.runDir !== null ? 1 : 0)
        }, result))
    const written = (result: R, ended: 0 | 1) =>
      options.appendLine(result).pipe(Effect.zipRight(counted(result, ended)), Effect.zipRight(report(result)))
    return {
      progress,
      report,
      /** A run begins. */
      started: Ref.update(progress, (p) => ({ ...p, inFlight: p.inFlight + 1 })),
      /** A result no run of this pass made (a bad line, a run an earlier pass finished): written and counted. */
      record: (result: R) => written(result, 0),
      /** A result counted without writing it again (a bad line an earlier pass already wrote). */
      count: (result: R) => counted(result, 0),
      /** A run that `started` ended with this result: written and counted. */
      ended: (result: R) => written(result, 1)
    }
  })
