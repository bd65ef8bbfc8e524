import * as Undici from "@effect/platform-node/Undici"
import { Effect } from "effect"
import { httpClientOver, layerPooledHttpClient, pooledAgent } from "../../src/services/httpClientPool.js"

/** The HTTP client exactly as `src/main.ts` builds it: its own undici Agent, destroyed when the layer is released. */
export const realHttpClientLayer = layerPooledHttpClient

/** One Agent for the worker, made on first use, as src/services/httpClientPool.ts makes the process's. */
let agent: Undici.Agent | undefined
const workerAgent = (): Undici.Agent => (agent ??= pooledAgent())

/**
 * The same client over one Agent kept for the worker, whose keep-alive connections to the fake outlive a test: a new
 * Agent and its new connections cost each test about 6 ms of CPU, both sides of the loopback (an Agent with one
 * request: 6.8 ms; the same request on a kept one: 1.1 ms). For tests where the pool's life is not the point: one that
 * counts the fake's connections, or that a release closes them, takes `realHttpClientLayer`
 * (test/unit/openAiCompatible.test.ts holds the pool's connections, and every command line of runCliInProcess builds
 * the real one). A fake's connections end when it closes.
 */
export const sharedHttpClientLayer = httpClientOver(Effect.sync(workerAgent))
