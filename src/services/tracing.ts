import { Context, Effect, Either, Layer, Option, type Tracer } from "effect"
import { DEFAULT_SERVICE_NAME, otelExportOf } from "../settings/otelEnvironment.js"
import { isOpenRouterUrl } from "../settings/paths.js"
import { ProcessIo } from "./processIo.js"
import { Settings } from "./settings.js"

/**
 * Whether this process exports spans (docs/tracing.md), and what its call spans say of the provider. Off by
 * default: then no span of ours is even made, so a run pays nothing for tracing.
 */
export interface TracingShape {
  readonly enabled: boolean
  /** `--trace-content`: the prompt and answer text go in the call spans. */
  readonly content: boolean
  /** `gen_ai.provider.name`. */
  readonly provider: string
  /** `server.address` / `server.port` of the provider. */
  readonly server: { readonly address: string; readonly port: number } | undefined
}

export class Tracing extends Context.Reference<Tracing>()("parallel-llm/Tracing", {
  defaultValue: (): TracingShape => ({ enabled: false, content: false, provider: "openai", server: undefined })
}) {}

/**
 * The span a run goes under, when something stands above it (an MCP `tools/call`, a batch item); a run with
 * none starts a trace of its own.
 */
export class RunParent extends Context.Reference<RunParent>()("parallel-llm/RunParent", {
  defaultValue: (): Option.Option<Tracer.AnySpan> => Option.none()
}) {}

/**
 * The run a call belongs to: every request to OpenRouter carries its id as `session_id` and the trace id as
 * `trace.trace_id`, so that OpenRouter's Broadcast groups a run's calls (and nests them under our spans).
 */
export interface RunTraceShape {
  readonly runId: string
  readonly traceId: string
}

export class RunTrace extends Context.Reference<RunTrace>()("parallel-llm/RunTrace", {
  defaultValue: (): RunTraceShape | undefined => undefined
}) {}

/** The span options that put a span under `parent`, or at the root of a new trace. */
export const underParent = (parent: Option.Option<Tracer.AnySpan>): { readonly parent: Tracer.AnySpan } | { readonly root: true } =>
  Option.match(parent, { onNone: () => ({ root: true }), onSome: (span) => ({ parent: span }) })

/**
 * Runs `effect` in a span that the runs under it go under (an MCP `tools/call`, a batch item), when spans are
 * exported; as it is otherwise. Its parent is `options.parent` (a caller's), or none: the root of a trace.
 */
export const withOuterSpan = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  options: { readonly parent: Option.Option<Tracer.AnySpan>; readonly kind: Tracer.SpanKind; readonly attributes: Record<string, unknown> }
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Tracing, (tracing) =>
    tracing.enabled
      ? Effect.flatMap(Effect.orDie(Effect.currentSpan), (span) => Effect.provideService(effect, RunParent, Option.some(span))).pipe(
        Effect.withSpan(name, { ...underParent(options.parent), kind: options.kind, attributes: options.attributes })
      )
      : effect)

const serverOf = (baseUrl: string): TracingShape["server"] => {
  const url = new URL(baseUrl)
  const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80
  return { address: url.hostname, port }
}

/**
 * Export of spans over OTLP/HTTP when the environment names an endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`):
 * the layer is chosen here, so a process without one builds no exporter, and no span of ours is made; the
 * exporter's modules are imported only then (the CLI's start-up). A variable that is wrong costs a warning and
 * leaves tracing off; it never stops a command.
 */
export const layerTracing: Layer.Layer<never, never, Settings> = Layer.unwrapEffect(Effect.gen(function*() {
  const io = yield* ProcessIo
  const settings = yield* Settings
  const wanted = otelExportOf(io.env)
  if (Either.isLeft(wanted)) {
    yield* Effect.logWarning(`tracing is off: ${wanted.left}`)
    return Layer.empty
  }
  if (wanted.right === undefined) return Layer.empty
  const tracing: TracingShape = {
    enabled: true,
    content: settings.traceContent,
    provider: isOpenRouterUrl(settings.baseUrl) ? "openrouter" : "openai",
    server: serverOf(settings.baseUrl)
  }
  const { layerOtlpExport } = yield* Effect.promise(() => import("./otlpExport.js"))
  return Layer.merge(
    layerOtlpExport({ ...wanted.right, serviceName: wanted.right.serviceName || DEFAULT_SERVICE_NAME }, io.stderr),
    Layer.succeed(Tracing, tracing)
  )
}))

/**
 * Effect's own spans off for `effect` (a batch's thousands of calls are cheaper without them), unless spans are
 * exported: then they are what the user asked for.
 */
export const withoutSpansUnlessExported = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Tracing, (tracing) => (tracing.enabled ? effect : Effect.withTracerEnabled(effect, false)))
