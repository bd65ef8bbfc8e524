import { Cause, Deferred, Effect, Exit, Fiber, FiberSet, Option, Ref, Stream, SubscriptionRef } from "effect"
import type { CandidateRecord } from "../domain/manifest.js"
import type { RunEvent, RunResult } from "../programs/run/request.js"

/** What a live run has done so far, as the MCP tools report it while it goes. */
export interface LiveSnapshot {
  readonly runId: string
  readonly runDir: string
  readonly createdAt: Date
  readonly models: ReadonlyArray<string>
  /** One entry per model, in order: its record once it finished. */
  readonly candidates: ReadonlyArray<CandidateRecord | undefined>
  /** The synthesizer being asked (the latest, when one failed over). */
  readonly synthesizer: string | undefined
  /** What the strategy step is doing (judges ranking, a refinement round), once it started. */
  readonly stage?: string | undefined
}

/** A run owned by the server rather than by the request that started it. */
export interface LiveRun {
  readonly runId: string
  readonly snapshot: Effect.Effect<LiveSnapshot>
  /** The snapshot now, then each time a candidate finishes or the synthesis starts or ends. */
  readonly changes: Stream.Stream<LiveSnapshot>
  /**
   * Streamed pieces received so far per candidate (and the synthesis, last): counted without waking
   * anyone, read when a progress line is written.
   */
  readonly streamed: () => ReadonlyArray<number>
  /** Completes with the run's exit: its result, or why it stopped without one. */
  readonly done: Deferred.Deferred<RunResult, RunFailure>
  /** Interrupts the run (its HTTP calls are aborted, its manifest written `cancelled`) and waits for it. */
  readonly cancel: Effect.Effect<void>
}

/** How a run can end without a result: a refusal or a store failure, with its message. */
export interface RunFailure {
  readonly _tag: string
  readonly message: string
}

/** The runs kept in memory after they end (their files stay on disk whatever happens to this list). */
const FINISHED_KEPT = 200

/**
 * The server's runs: each one a fiber in a server-scoped set, so that a run outlives the request that
 * started it (a client that stops waiting does not lose the answer). A run is found again by its id.
 * Closing the scope interrupts every run still going and waits for their manifests.
 */
export const makeLiveRuns = Effect.gen(function*() {
  const fibers = yield* FiberSet.make<void, never>()
  const runs = yield* Ref.make<ReadonlyMap<string, LiveRun>>(new Map())

  const remember = (run: LiveRun) => Ref.update(runs, (all) => new Map(all).set(run.runId, run))
  // Finished runs stay findable for a while (their files stay on disk whatever happens to this list).
  const finished: Array<string> = []
  const forget = (runId: string | undefined) =>
    Ref.update(runs, (all) => {
      if (runId !== undefined) finished.push(runId)
      if (finished.length <= FINISHED_KEPT) return all
      const next = new Map(all)
      for (const id of finished.splice(0, finished.length - FINISHED_KEPT)) next.delete(id)
      return next
    })

  /**
   * Starts a run in the background and returns it as soon as it has a run directory. A run refused
   * before that (bad request, a budget, a store that cannot be written) fails here with its reason.
   */
  const start = <R>(
    makeRun: (onEvent: (event: RunEvent) => Effect.Effect<void>) => Effect.Effect<RunResult, RunFailure, R>
  ): Effect.Effect<LiveRun, RunFailure, R> =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<LiveRun, RunFailure>()
      const done = yield* Deferred.make<RunResult, RunFailure>()
      let state: SubscriptionRef.SubscriptionRef<LiveSnapshot> | undefined
      let runId: string | undefined
      let streamed: Array<number> = []
      const fiberRef = yield* Deferred.make<Fiber.RuntimeFiber<void, never>>()

      const update = (f: (s: LiveSnapshot) => LiveSnapshot) => (state === undefined ? Effect.void : SubscriptionRef.update(state, f))
      const onEvent = (event: RunEvent): Effect.Effect<void> => {
        switch (event._tag) {
          case "RunStarted":
            return Effect.gen(function*() {
              streamed = [...event.models.map(() => 0), 0]
              const ref = yield* SubscriptionRef.make<LiveSnapshot>({
                runId: event.run.id,
                runDir: event.run.dir,
                createdAt: event.run.createdAt,
                models: event.models,
                candidates: event.models.map(() => undefined),
                synthesizer: undefined
              })
              state = ref
              runId = event.run.id
              const live: LiveRun = {
                runId: event.run.id,
                snapshot: SubscriptionRef.get(ref),
                changes: ref.changes,
                streamed: () => streamed,
                done,
                cancel: Deferred.await(fiberRef).pipe(Effect.flatMap(Fiber.interrupt), Effect.asVoid)
              }
              yield* remember(live)
              yield* Deferred.succeed(started, live)
            })
          case "CandidateDelta":
            return Effect.sync(() => {
              streamed[event.index] = (streamed[event.index] ?? 0) + 1
            })
          case "SynthesisDelta":
            return Effect.sync(() => {
              streamed[streamed.length - 1] = (streamed[streamed.length - 1] ?? 0) + 1
            })
          // Only a step of the run wakes whoever watches it (a progress line each).
          case "CandidateFinished":
            return update((s) => ({
              ...s,
              candidates: s.candidates.map((c, i) => (i === event.outcome.index ? event.outcome.record : c))
            }))
          case "StrategyStep":
            return update((s) => ({ ...s, stage: event.message }))
          case "SynthesisStarted":
            return update((s) => ({ ...s, synthesizer: event.model }))
          case "CandidateRetry":
          case "RunFinished":
            return Effect.void
        }
      }

      // On every exit, interruption included (a finalizer, not a continuation): whoever waits is told how
      // it ended, and a run that never started fails its start.
      const body = makeRun(onEvent).pipe(
        Effect.onExit((exit) => {
          if (Exit.isSuccess(exit)) return Deferred.succeed(done, exit.value)
          const failure: RunFailure = Exit.isInterrupted(exit)
            ? { _tag: "Interrupted", message: "the run was cancelled before it produced an answer" }
            : failureOf(exit.cause)
          return Effect.zipRight(Deferred.fail(done, failure), Deferred.fail(started, failure))
        }),
        Effect.ensuring(Effect.suspend(() => forget(runId))),
        Effect.ignore
      )
      const fiber = yield* FiberSet.run(fibers, body)
      yield* Deferred.succeed(fiberRef, fiber)
      return yield* Deferred.await(started)
    })

  return {
    start,
    /** A run this server started, live or recently finished. */
    get: (runId: string): Effect.Effect<LiveRun | undefined> => Ref.get(runs).pipe(Effect.map((all) => all.get(runId))),
    /** How many runs are still going. */
    size: FiberSet.size(fibers),
    /** Interrupts every run still going and waits for each (their manifests written `cancelled`). */
    cancelAll: FiberSet.clear(fibers)
  }
})

export type LiveRuns = Effect.Effect.Success<typeof makeLiveRuns>

const failureOf = (cause: Cause.Cause<RunFailure>): RunFailure =>
  Option.getOrElse(Cause.failureOption(cause), () => ({
    _tag: "InternalError",
    message: `internal error: ${Cause.pretty(cause).split("\n")[0] ?? "unknown"}`
  }))
