import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { Effect, Layer } from "effect"

/**
 * The HTTP client exactly as `src/main.ts` builds it: one pooled keep-alive undici Agent, closed with
 * the layer, undici's own header/body timeouts off (Effect enforces each model's budget).
 */
export const realHttpClientLayer = NodeHttpClient.layerUndiciWithoutDispatcher.pipe(
  Layer.provide(
    Layer.scoped(
      NodeHttpClient.Dispatcher,
      Effect.acquireRelease(
        Effect.sync(() => new Undici.Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 })),
        (agent) => Effect.promise(() => agent.destroy())
      )
    )
  )
)

/** Polls `condition` until it holds, failing with `what` after `timeoutMs` (generous: slow CI machines). */
export const waitUntil = async (condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
