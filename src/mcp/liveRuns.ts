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

/** A run as a tool starts it: the program, given where to send its events. */
type MakeRun<R> = (onEvent: (event: RunEvent) => Effect.Effect<void>) => Effect.Effect<RunResult, RunFailure, R>

/** The server's runs: the fibers that run them, the runs by id, and the ids of those that ended, oldest first. */
interface Registry {
  readonly fibers: FiberSet.FiberSet<void, never>
  readonly runs: Ref.Ref<ReadonlyMap<string, LiveRun>>
  readonly finished: Array<string>
}

/**
 * The server's runs: each one a fiber in a server-scoped set, so that a run outlives the request that
 * started it (a client that stops waiting does not lose the answer). A run is found again by its id.
 * Closing the scope interrupts every run still going and waits for their manifests.
 */
export const makeLiveRuns = Effect.gen(function*() {
  const registry: Registry = {
    fibers: yield* FiberSet.make<void, never>(),
    runs: yield* Ref.make<ReadonlyMap<string, LiveRun>>(new Map()),
    finished: []
  }
  return {
    start: <R>(makeRun: MakeRun<R>) => start(registry, makeRun),
    /** A run this server started, live or recently finished. */
    get: (runId: string): Effect.Effect<LiveRun | undefined> => Ref.get(registry.runs).pipe(Effect.map((all) => all.get(runId))),
    /** How many runs are still going. */
    size: FiberSet.size(registry.fibers),
    /** Interrupts every run still going and waits for each (their manifests written `cancelled`). */
    cancelAll: FiberSet.clear(registry.fibers)
  }
})

const remember = (registry: Registry, run: LiveRun) => Ref.update(registry.runs, (all) => new Map(all).set(run.runId, run))

/** Finished runs stay findable for a while (their files stay on disk whatever happens to this list). */
const forget = (registry: Registry, runId: string | undefined) =>
  Ref.update(registry.runs, (all) => {
    const finished = registry.finished
    if (runId !== undefined) finished.push(runId)
    if (finished.length <= FINISHED_KEPT) return all
    const next = new Map(all)
    for (const id of finished.splice(0, finished.length - FINISHED_KEPT)) next.delete(id)
    return next
  })

/** Where one run's start and end are told: whoever waits for it, and the fiber that runs it (to cancel it). */
interface Signals {
  readonly started: Deferred.Deferred<LiveRun, RunFailure>
  readonly done: Deferred.Deferred<RunResult, RunFailure>
  readonly fiber: Deferred.Deferred<Fiber.RuntimeFiber<void, never>>
}

/** What one run's events have said so far; written by its own events only, one at a time. */
interface Tracking {
  snapshot: SubscriptionRef.SubscriptionRef<LiveSnapshot> | undefined
  runId: string | undefined
  /** Pieces streamed per candidate, then the synthesis: plain counts, so that a token wakes no one. */
  streamed: Array<number>
}

/**
 * Starts a run in the background and returns it as soon as it has a run directory. A run refused
 * before that (bad request, a budget, a store that cannot be written) fails here with its reason.
 */
const start = <R>(registry: Registry, makeRun: MakeRun<R>): Effect.Effect<LiveRun, RunFailure, R> =>
  Effect.gen(function*() {
    const signals: Signals = {
      started: yield* Deferred.make<LiveRun, RunFailure>(),
      done: yield* Deferred.make<RunResult, RunFailure>(),
      fiber: yield* Deferred.make<Fiber.RuntimeFiber<void, never>>()
    }
    const tracking: Tracking = { snapshot: undefined, runId: undefined, streamed: [] }
    // On every exit, interruption included (a finalizer, not a continuation): whoever waits is told how
    // it ended, and a run that never started fails its start.
    const body = makeRun((event) => onEvent(registry, signals, tracking, event)).pipe(
      Effect.onExit((exit) => tellEnd(signals, exit)),
      Effect.ensuring(Effect.suspend(() => forget(registry, tracking.runId))),
      Effect.ignore
    )
    const fiber = yield* FiberSet.run(registry.fibers, body)
    yield* Deferred.succeed(signals.fiber, fiber)
    return yield* Deferred.await(signals.started)
  })

const tellEnd = (signals: Signals, exit: Exit.Exit<RunResult, RunFailure>) => {
  if (Exit.isSuccess(exit)) return Deferred.succeed(signals.done, exit.value)
  const failure: RunFailure = Exit.isInterrupted(exit)
    ? { _tag: "Interrupted", message: "the run was cancelled before it produced an answer" }
    : failureOf(exit.cause)
  return Effect.zipRight(Deferred.fail(signals.done, failure), Deferred.fail(signals.started, failure))
}

const onEvent = (registry: Registry, signals: Signals, tracking: Tracking, event: RunEvent): Effect.Effect<void> => {
  const update = (f: (s: LiveSnapshot) => LiveSnapshot) =>
    tracking.snapshot === undefined ? Effect.void : SubscriptionRef.update(tracking.snapshot, f)
  const { streamed } = tracking
  switch (event._tag) {
    case "RunStarted":
      return runStarted(registry, signals, tracking, event)
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

/** The run has its directory: it becomes a live run, found by its id, and whoever started it is answered. */
const runStarted = (registry: Registry, signals: Signals, tracking: Tracking, event: Extract<RunEvent, { _tag: "RunStarted" }>) =>
  Effect.gen(function*() {
    tracking.streamed = [...event.models.map(() => 0), 0]
    const ref = yield* SubscriptionRef.make<LiveSnapshot>({
      runId: event.run.id,
      runDir: event.run.dir,
      createdAt: event.run.createdAt,
      models: event.models,
      candidates: event.models.map(() => undefined),
      synthesizer: undefined
    })
    tracking.snapshot = ref
    tracking.runId = event.run.id
    const live: LiveRun = {
      runId: event.run.id,
      snapshot: SubscriptionRef.get(ref),
      changes: ref.changes,
      streamed: () => tracking.streamed,
      done: signals.done,
      cancel: Deferred.await(signals.fiber).pipe(Effect.flatMap(Fiber.interrupt), Effect.asVoid)
    }
    yield* remember(registry, live)
    yield* Deferred.succeed(signals.started, live)
  })

export type LiveRuns = Effect.Effect.Success<typeof makeLiveRuns>

const failureOf = (cause: Cause.Cause<RunFailure>): RunFailure =>
  Option.getOrElse(Cause.failureOption(cause), () => ({
    _tag: "InternalError",
    message: `internal error: ${Cause.pretty(cause).split("\n")[0] ?? "unknown"}`
  }))
