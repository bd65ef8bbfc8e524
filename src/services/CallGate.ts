import { Context, Effect, Layer } from "effect"

export interface CallGateShape {
  /** Runs `effect` holding one permit: at most `permits` of them run at once, across every run that shares the gate. */
  readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The bound, or `undefined` when there is none. */
  readonly permits: number | undefined
}

const unlimited: CallGateShape = { withPermit: (effect) => effect, permits: undefined }

/**
 * The process-wide bound on HTTP calls in flight, taken by `callModel` around each attempt.
 * By default there is none (a single run is bounded by its own fan-out concurrency); `batch`
 * provides {@link layerCallGate} so that every run of the batch shares one bound.
 */
export class CallGate extends Context.Reference<CallGate>()("parallel-llm/CallGate", {
  defaultValue: (): CallGateShape => unlimited
}) {}

/**
 * One turn of the event loop. undici hands a keep-alive connection back to its pool only on the turn
 * after a response ended (`setImmediate`, to catch servers that close it anyway): a call that started
 * before that would open another connection.
 */
const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * A gate of `permits` calls in flight at once (an Effect semaphore; waiters are served in order). A permit
 * is given back one event-loop turn after its call ends, once the call's connection is free again: so the
 * calls never need more connections than permits, however many runs share the gate.
 */
export const makeCallGate = (permits: number): Effect.Effect<CallGateShape> =>
  Effect.map(Effect.makeSemaphore(permits), (semaphore) => ({
    withPermit: (effect) => semaphore.withPermits(1)(Effect.ensuring(effect, nextTurn)),
    permits
  }))

export const layerCallGate = (permits: number): Layer.Layer<CallGate> => Layer.effect(CallGate, makeCallGate(permits))
