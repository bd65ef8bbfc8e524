import { it } from "@effect/vitest"
import { Effect, Layer, type Scope, TestClock, TestContext, TestServices } from "effect"
import { quiet } from "./itLive.js"

// `it.effect` and `it.scoped` on a fresh TestClock, as @effect/vitest's own, but with the TestClock and what it stands
// on only (the live services and the annotations it reads), not also the TestConfig and Sized of property tests,
// which no test here uses: building all of TestContext costs each test about 9 ms of CPU, this about 3. Effect's
// default logger is removed (`quiet`), as it.effect has it. For tests on the live clock, see itLive.ts.

const testClockOnly = TestClock.defaultTestClock.pipe(
  Layer.provideMerge(Layer.merge(TestServices.liveLayer(), TestServices.annotationsLayer())),
  Layer.provideMerge(TestContext.LiveContext)
)

export const itClock = {
  /** `it.effect`: a fresh TestClock for each test. */
  effect: <A, E>(name: string, self: () => Effect.Effect<A, E>, timeout?: number): void =>
    it.live(name, () => quiet(Effect.provide(self(), testClockOnly)), timeout),
  /** `it.scoped`: a fresh TestClock for each test, the test's scope closed before it. */
  scoped: <A, E>(name: string, self: () => Effect.Effect<A, E, Scope.Scope>, timeout?: number): void =>
    it.live(name, () => quiet(Effect.provide(Effect.scoped(self()), testClockOnly)), timeout)
}
