import { HttpClient } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { Effect, Layer, type Scope } from "effect"

/**
 * A keep-alive undici Agent with the process's options. Undici's own header and body timeouts (300 s) are off:
 * each model's time budget is enforced by Effect, and a real synthesis can legitimately stay silent for minutes
 * before its first byte.
 */
export const pooledAgent = (): Undici.Agent => new Undici.Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 })

/**
 * The platform's undici client over `dispatcher`, as one layer: its requests make no span and send no traceparent
 * header. Nothing here exports HTTP spans (the provider has no use for ours, and the OTLP exporter's own requests
 * must not be traced). Set once for the layer's lifetime rather than per request
 * (`HttpClient.withTracerDisabledWhen` is an `Effect.locally` around every request: ~30 Effect operations a call,
 * bench/README.md).
 *
 * The client itself, not `NodeHttpClient.layerUndiciWithoutDispatcher`: that layer merges the context it was built
 * in into every request's (`Effect.mapInputContext`: an `Effect.locally` and a copy of every service, per request),
 * and undici's client reads nothing from it: it holds its dispatcher already.
 *
 * One `Layer.scoped` rather than a merge of a client layer, a dispatcher layer and a `Layer.locallyScoped`: each
 * layer of a graph costs its build ~150-300 Effect operations and the merge a fiber per side, and every command
 * line, MCP server and test builds this one (1,371 operations and 8 fibers as four layers).
 */
export const httpClientOver = <E, R>(
  dispatcher: Effect.Effect<Undici.Dispatcher, E, R | Scope.Scope>
): Layer.Layer<HttpClient.HttpClient, E, Exclude<R, Scope.Scope>> =>
  Layer.scoped(
    HttpClient.HttpClient,
    Effect.flatMap(dispatcher, (agent) =>
      Effect.as(Effect.locallyScoped(HttpClient.currentTracerDisabledWhen, () => true), NodeHttpClient.makeUndici(agent)))
  )

/** The process's one HTTP client: a pooled Agent of its own, closed when the layer is released. */
export const layerPooledHttpClient = httpClientOver(
  Effect.acquireRelease(Effect.sync(pooledAgent), (agent) => Effect.promise(() => agent.destroy()))
)
