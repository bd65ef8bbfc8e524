import { Effect, Either } from "effect"

/**
 * The failure of `effect`, for a test that expects one; a success fails the test with a short message.
 * (`Effect.flip` would fail it with the success as the error: a whole run, which vitest's worker never
 * finished reporting, so a broken check hung the suite instead of failing it.)
 */
export const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.flatMap(
    Effect.either(effect),
    (result) => (Either.isLeft(result) ? Effect.succeed(result.left) : Effect.dieMessage("expected a failure, but the effect succeeded"))
  )
