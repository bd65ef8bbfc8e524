import { Duration, Effect, Either, Option } from "effect"
import type { ModelInfo } from "../domain/modelCall.js"
import { CallGate } from "../services/callGate.js"
import { ModelClient } from "../services/modelClient.js"

/** Longest wait for the provider's model catalogue before a run decides without it. */
export const CATALOGUE_WAIT = Duration.seconds(10)

/**
 * The provider's model catalogue, for what a run decides from it (structured output, who reads images): the
 * one the client keeps when it has it, without a race or a permit (most runs); else fetched as an upstream
 * call like the others (it holds a permit, so it never needs a connection more) within `wait`, or why not.
 */
export const catalogueWithin = (
  wait: Duration.Duration = CATALOGUE_WAIT
): Effect.Effect<Either.Either<ReadonlyArray<ModelInfo>, { readonly message: string }>, never, ModelClient> =>
  Effect.flatMap(ModelClient, (client) =>
    Effect.flatMap(client.keptCatalogue, (kept) =>
      Option.isSome(kept)
        ? Effect.succeed(Either.right(kept.value))
        : Effect.flatMap(CallGate, (gate) =>
          gate.withPermit(client.catalogue).pipe(
            Effect.timeoutFail({ duration: wait, onTimeout: () => ({ message: `no answer within ${Duration.format(wait)}` }) }),
            Effect.either
          ))))
