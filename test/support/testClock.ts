import { Effect, Fiber, TestClock } from "effect"

/**
 * Moves the TestClock on one millisecond at a time until `done` holds. For programs that do real I/O
 * between their sleeps: one large `TestClock.adjust` would move the clock past a sleep that only starts
 * once the I/O has finished, and that sleep would never end. Each step waits for every fiber to suspend
 * (and lets the event loop turn), so the I/O gets its chance; the bound turns a hang into a failure.
 */
export const advanceUntil = (done: Effect.Effect<boolean>, maxSteps = 2_000): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let step = 0; step < maxSteps; step++) {
      if (yield* done) return
      yield* TestClock.adjust(1)
    }
    return yield* Effect.dieMessage(`still waiting after ${maxSteps} steps of the TestClock`)
  })

/** Runs `effect` to its end on the TestClock (see {@link advanceUntil}). */
export const runToEnd = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    yield* advanceUntil(Effect.map(Fiber.poll(fiber), (exit) => exit._tag === "Some"))
    return yield* Fiber.join(fiber)
  })
