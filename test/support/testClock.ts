import { Chunk, Effect, Fiber, TestClock } from "effect"

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

/**
 * Waits, in real time (the program is doing real I/O meanwhile), until the TestClock's pending sleeps satisfy `ready`
 * (a number: at least that many), and returns how far ahead of the clock each wakes, soonest first: what a program
 * has scheduled, read exactly.
 */
export const pendingSleeps = (
  ready: number | ((aheadMs: ReadonlyArray<number>) => boolean),
  timeoutMs = 10_000
): Effect.Effect<ReadonlyArray<number>> =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const now = yield* TestClock.currentTimeMillis
      const ahead = Chunk.toReadonlyArray(yield* TestClock.sleeps()).map((at) => at - now).sort((a, b) => a - b)
      if (typeof ready === "number" ? ahead.length >= ready : ready(ahead)) return ahead
      if (Date.now() > deadline) return yield* Effect.dieMessage(`the sleeps never got ready (${ahead.join(", ")} ms ahead)`)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
  })

/**
 * Runs `effect` on the TestClock and moves the clock past the first sleep it starts, once that is pending (a killed
 * process's grace before SIGKILL): a wait that is not what the test proves, taken without waiting it out. Later sleeps
 * are left alone: whatever comes after (SIGKILL's own bounded wait) ends by itself. The TestClock keeps the sleeps of
 * races already decided (a grace whose process had exited) until the clock passes them: only a new one counts.
 */
export const pastFirstSleep = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const before = Chunk.size(yield* TestClock.sleeps())
    const fiber = yield* Effect.fork(effect)
    const ahead = yield* pendingSleeps(before + 1)
    yield* TestClock.adjust(Math.max(0, ...ahead))
    return yield* Fiber.join(fiber)
  })
