import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { Context, Effect, Layer, Option } from "effect"
import type { SettingsError } from "./domain/errors.js"
import { cleartextKeyWarning } from "./domain/text.js"
import { CallGate } from "./services/callGate.js"
import { layerPooledHttpClient } from "./services/httpClientPool.js"
import { Logging } from "./services/logging.js"
import { ModelClient } from "./services/modelClient.js"
import { RunStore } from "./services/runStore.js"
import { Settings } from "./services/settings.js"
import { layerTracing } from "./services/tracing.js"
import { type DegradedSettings, StartupProblems } from "./settings/degraded.js"

/**
 * Once per entry point, when the services are built: an API key about to travel in clear, and what a
 * server started without (its tools say it again to the client, call by call).
 */
export const layerStartupWarnings = Layer.effectDiscard(Effect.gen(function*() {
  const settings = yield* Settings
  const warning = cleartextKeyWarning(settings.baseUrl, Option.isSome(settings.apiKey))
  if (warning !== undefined) yield* Effect.logWarning(warning)
  for (const problem of yield* StartupProblems) yield* Effect.logError(`not ready: ${problem.message}`)
}))

/** Every service a command or the MCP server may use. */
export type AppServices = Settings | ModelClient | RunStore | Logging

/**
 * The file system and paths: the entry point's own, which its settings are read through too (runCli builds them once
 * a process; built again in this graph, they cost each command line ~740 of an `ask`'s ~10,200 Effect operations).
 */
export type AppPlatform = FileSystem.FileSystem | Path.Path

/**
 * The application's service graph, composed once: everything but the settings, which each entry point
 * builds from its own flags, and the platform; with `gate`, the entry point's bound on calls in flight (one
 * member more of the graph, not one more level: each level costs every start a merge of its own). One HTTP
 * connection pool, closed when the entry point ends; the spans still buffered are exported then too.
 */
const appGraph = (
  gate: Layer.Layer<CallGate, never, Settings>
): Layer.Layer<Exclude<AppServices, Settings> | CallGate, SettingsError, Settings | AppPlatform> =>
  Layer.mergeAll(
    // The provider: the OpenAI-compatible HTTP client. Another is `ModelClient.provider(itsMake)` here (docs/extending.md).
    ModelClient.Default,
    RunStore.DefaultWithoutDependencies,
    layerStartupWarnings,
    // Span export, when an OTLP endpoint is set (docs/tracing.md); nothing at all otherwise.
    layerTracing,
    gate
  ).pipe(
    // Logging first, so the warnings above are logged by it. Each layer of the graph costs its building
    // (about 0.5 ms of CPU at every start): the graph names each once.
    Layer.provideMerge(Logging.Default),
    Layer.provide(layerPooledHttpClient)
  )

/**
 * The whole graph for settings built by `settings`: what an entry point provides, once. Its CallGate
 * (`maxInFlight`) bounds the upstream calls of every run of the process together, MCP calls included.
 */
export const appLayer = <E, R>(
  settings: Layer.Layer<Settings, E, R>
): Layer.Layer<AppServices | CallGate, SettingsError | E, R | AppPlatform> =>
  appGraph(CallGate.fromMaxInFlight).pipe(Layer.provideMerge(settings))

/** `batch`: the same graph, with one bound on HTTP calls in flight for the whole process (its `--concurrency`). */
export const batchLayer = <E, R>(
  settings: Layer.Layer<Settings, E, R>
): Layer.Layer<AppServices | CallGate, SettingsError | E, R | AppPlatform> =>
  appGraph(CallGate.fromSettings).pipe(Layer.provideMerge(settings))

/**
 * `serve`: the same graph over settings that may be degraded (see settings/degraded.ts): it starts
 * whatever is wrong with them, with the problems as a service the tools answer from.
 */
export const serveLayer = <E, R>(
  load: Effect.Effect<DegradedSettings, E, R>
): Layer.Layer<AppServices | CallGate | StartupProblems, SettingsError | E, R | AppPlatform> =>
  appGraph(CallGate.fromMaxInFlight).pipe(
    Layer.provideMerge(
      Layer.effectContext(
        Effect.map(
          load,
          ({ loaded, problems }) => Context.make(Settings, Settings.make(loaded.settings)).pipe(Context.add(StartupProblems, problems))
        )
      )
    )
  )
