import { Effect, Layer, Scope } from "effect"

/**
 * The services of `layer`, built on first use and kept for the life of the process: for layers that hold nothing
 * to release (stateless platform services), which every command line or connection would otherwise build again.
 * Their scope is never closed, so a layer with a finalizer does not belong here.
 */
export const buildOnce = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.runSync(Effect.cached(Effect.flatMap(Scope.make(), (scope) => Layer.buildWithScope(layer, scope))))
