import { Context, Effect, Layer } from "effect"
import { makePermitLine } from "./permitLine.js"
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
  static readonly fromSettings: Layer.Layer<CallGate, never, Settings> = Layer.effect(
    CallGate,
    Effect.flatMap(Settings, (settings) => makeCallGate(settings.concurrency))
  )
  /** A gate of `settings.maxInFlight` permits, shared by every run of the process (`serve`, `ask`). */
  static readonly fromMaxInFlight: Layer.Layer<CallGate, never, Settings> = Layer.effect(
    CallGate,
    Effect.flatMap(Settings, (settings) => makeCallGate(settings.maxInFlight))
  )
}

/**
 * A gate of `permits` calls in flight at once: a line of permits (permitLine.ts). A call takes a
 * permit and gives it back one event-loop turn after it ends, once its connection is free again: undici hands a
 * keep-alive connection back to its pool only on the turn after a response ended (`setImmediate`, to catch
 * servers that close it anyway), and a call that started before that would open another connection. So the
 * calls never need more connections than permits, however many runs share the gate. The caller goes on at
 * once; only the next call waits for that turn. Waiters are served in order, and a permit given back wakes
 * exactly one of them (Effect's semaphore wakes every waiter on each release: with 16 runs of 5 candidates,
 * 60-odd fibers woken for each call that ends). Plain state rather than a `Queue` of tokens: a permit taken
 * when one is free costs no fiber operation of its own (a queue's take and offer cost ~34 a call), and every
 * call of a batch passes here.
 */
export const makeCallGate = (permits: number): Effect.Effect<CallGateShape> =>
  Effect.sync(() => {
    const line = makePermitLine(permits)
    /** Called as a call ends (in plain code, from its match): the permit back on the next turn. */
    const giveBack = () => void setImmediate(line.leave)
    // A waiter's place in the line. It is handed the permit by the line (`turn`, from `leave`, in plain code),
    // which can cross with its interruption: `giveUp` then gives back a permit already handed, or leaves the line.
    const waiter = () => {
      let handed = false
      let turn: (() => void) | undefined
      return {
        taken: Effect.async<void>((resume) => {
          turn = () => {
            handed = true
            resume(Effect.void)
          }
          line.enter(turn)
        }),
        giveUp: () => {
          if (handed) line.leave()
          else if (turn !== undefined) line.withdraw(turn)
        }
      }
    }
    return {
      // One mask for the whole permit: only the wait for a permit and the call itself can be interrupted, and what
      // follows either is matched outside them. An interruption that comes once the wait is over (a fiber can yield
      // at any step) is then seen only as the call starts, and that failure gives the permit back. Matched inside
      // the wait's interruptible region (an `onInterrupt` there), it was seen as the region closed, after the
      // handler: neither the call nor the giving back ran, and the permit was lost.
      withPermit: (effect) =>
        Effect.uninterruptibleMask((restore) => {
          const call = Effect.matchCauseEffect(restore(effect), {
            onFailure: (cause) => {
              giveBack()
              return Effect.failCause(cause)
            },
            onSuccess: (value) => {
              giveBack()
              return Effect.succeed(value)
            }
          })
          // The permit is taken in plain code, with nothing between it and the call.
          if (line.tryEnter()) return call
          const place = waiter()
          return Effect.matchCauseEffect(restore(place.taken), {
            onFailure: (cause) => {
              place.giveUp()
              return Effect.failCause(cause)
            },
            onSuccess: () => call
          })
        }),
      permits
    }
  })

export const layerCallGate = (permits: number): Layer.Layer<CallGate> => Layer.effect(CallGate, makeCallGate(permits))
