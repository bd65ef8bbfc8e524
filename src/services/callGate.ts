import { Context, Effect, Layer, Queue } from "effect"
import { Settings } from "./settings.js"

export interface CallGateShape {
  /** Runs `effect` holding one permit: at most `permits` of them run at once, across every run that shares the gate. */
  readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The bound, or `undefined` when there is none. */
  readonly permits: number | undefined
}

const unlimited: CallGateShape = { withPermit: (effect) => effect, permits: undefined }

/**
 * The process-wide bound on HTTP calls in flight, taken by `callModel` around each attempt, on top of each
 * run's own bound (its fan-out concurrency). The entry points provide one gate per process: `maxInFlight`
 * permits (`serve`, `ask`), or in `batch` its `--concurrency`. Without a gate provided (tests), there is none.
 */
export class CallGate extends Context.Reference<CallGate>()("parallel-llm/CallGate", {
  defaultValue: (): CallGateShape => unlimited
}) {
  /** A gate of `settings.concurrency` permits (batch, where `--concurrency` is the process-wide bound). */
  static readonly fromSettings: Layer.Layer<CallGate, never, Settings> = Layer.unwrapEffect(
    Effect.map(Settings, (settings) => layerCallGate(settings.concurrency))
  )
  /** A gate of `settings.maxInFlight` permits, shared by every run of the process (`serve`, `ask`). */
  static readonly fromMaxInFlight: Layer.Layer<CallGate, never, Settings> = Layer.unwrapEffect(
    Effect.map(Settings, (settings) => layerCallGate(settings.maxInFlight))
  )
}

/**
 * A gate of `permits` calls in flight at once: a queue holding one token per permit. A call takes a token
 * and puts it back one event-loop turn after it ends, once its connection is free again: undici hands a
 * keep-alive connection back to its pool only on the turn after a response ended (`setImmediate`, to catch
 * servers that close it anyway), and a call that started before that would open another connection. So the
 * calls never need more connections than permits, however many runs share the gate. The caller goes on at
 * once; only the next call waits for that turn. Waiters are served in order, and a token given back wakes
 * exactly one of them (Effect's semaphore wakes every waiter on each release: with 16 runs of 5 candidates,
 * 60-odd fibers woken for each call that ends).
 */
export const makeCallGate = (permits: number): Effect.Effect<CallGateShape> =>
  Effect.gen(function*() {
    const tokens = yield* Queue.bounded<true>(permits)
    yield* Queue.offerAll(tokens, Array.from({ length: permits }, () => true as const))
    const giveBack = Effect.sync(() => {
      setImmediate(() => Queue.unsafeOffer(tokens, true))
    })
    return {
      // One mask for the whole permit: only the wait for a token and the call itself can be interrupted.
      withPermit: (effect) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.zipRight(
            restore(Queue.take(tokens)),
            Effect.matchCauseEffect(restore(effect), {
              onFailure: (cause) => Effect.zipRight(giveBack, Effect.failCause(cause)),
              onSuccess: (value) => Effect.as(giveBack, value)
            })
          )
        ),
      permits
    }
  })

export const layerCallGate = (permits: number): Layer.Layer<CallGate> => Layer.effect(CallGate, makeCallGate(permits))
