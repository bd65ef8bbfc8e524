import { it } from "@effect/vitest"
import { Effect, FiberRef, HashSet, Logger, type Scope } from "effect"

// `it.effect` and `it.scoped` build their test services (TestClock, TestConfig, Annotations, Live, Sized) afresh for
// every test: about 10 ms of CPU each, more than most of the tests themselves. A test that neither moves the clock
// nor reads the time has no use for them: these run it on the live clock instead, with Effect's default logger
// removed as it.effect has it, so the logs of the programs under test stay out of the output.

/** The effect with Effect's default logger removed, as it.effect has it. */
export const quiet = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locallyWith(effect, FiberRef.currentLoggers, HashSet.remove(Logger.defaultLogger))

export const itLive = {
  /** `it.effect` without the TestClock. */
  effect: <A, E>(name: string, self: () => Effect.Effect<A, E>, timeout?: number): void => it.live(name, () => quiet(self()), timeout),
  /** `it.scoped` without the TestClock. */
  scoped: <A, E>(name: string, self: () => Effect.Effect<A, E, Scope.Scope>, timeout?: number): void =>
    it.scopedLive(name, () => quiet(self()), timeout)
}
