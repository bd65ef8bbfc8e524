import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { HttpClient, HttpClientError, type HttpClientResponse } from "@effect/platform"
import { Clock, Context, Duration, Effect, Fiber, FiberSet, Layer, Ref } from "effect"
import { exportTarget, type OtelExport } from "../settings/otelEnvironment.js"
import { layerPooledHttpClient } from "./httpClientPool.js"
import { formatStderrLine } from "./logging.js"
import type { OutputStream } from "./processIo.js"

// Built only when an OTLP endpoint is set (services/tracing.ts): a process that exports nothing makes no
// exporter, no connection pool of its own and no span of ours.

/** Why an export failed, in words that name no header (the collector's key is in them). */
const reasonOf = (error: HttpClientError.HttpClientError): string =>
  error._tag === "ResponseError" ? `HTTP ${error.response.status}` : error.cause instanceof Error ? error.cause.message : error.reason

/** Not through the log: the exporter's fibers may outlive the command's logger. */
const warn = (stderr: OutputStream, text: string) =>
  Effect.sync(() => stderr.write(`${formatStderrLine({ level: "warning", date: new Date(), text, context: [] })}\n`))

/** The exports still being sent, and when the end of the command stops waiting for them. */
interface Sends {
  readonly fibers: FiberSet.FiberSet<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>
  /** Set when the exporter starts shutting down: then plus `OTEL_BSP_EXPORT_TIMEOUT`. */
  readonly endBy: Ref.Ref<number>
}

/**
 * The exporter's HTTP client: spans of its own never traced, and the first failure said once on stderr (the
 * exporter itself drops failed batches silently). Each export is sent from a fiber of `sends`, not the
 * exporter's: at shutdown the exporter interrupts its periodic export wherever it stands (@effect/opentelemetry
 * 0.64), which would abort a request the collector has not answered yet and lose its spans; `awaitSends` waits
 * for it instead. Each request gives up after `timeoutMs` (`OTEL_EXPORTER_OTLP_TIMEOUT`): the exporter sets no
 * bound of its own, and our pool turns undici's off, so a collector that never answered held every export of a long
 * `serve` or `batch` open, with its spans, for as long as the process ran.
 */
const reportingClient = (client: HttpClient.HttpClient, sends: Sends, target: string, timeoutMs: number, stderr: OutputStream) => {
  let warned = false
  return client.pipe(
    HttpClient.transform((send, request) =>
      Effect.timeoutFail(send, {
        duration: Duration.millis(timeoutMs),
        onTimeout: () =>
          new HttpClientError.RequestError({
            request,
            reason: "Transport",
            cause: new Error(`no answer within ${timeoutMs} ms, OTEL_EXPORTER_OTLP_TIMEOUT`)
          })
      })
    ),
    HttpClient.filterStatusOk,
    HttpClient.tapError((error) => {
      if (warned) return Effect.void
      warned = true
      return warn(stderr, `tracing: cannot export spans to ${target} (${reasonOf(error)}); they are dropped, the work goes on`)
    }),
    HttpClient.transform((send) => Effect.flatMap(FiberSet.run(sends.fibers, send), Fiber.join))
  )
}

/**
 * The end of the exports still being sent when the exporter has shut down (its last export included), until
 * `sends.endBy`: a collector that does not answer holds up the end of a command that long, then what it has not
 * answered is cut (when `sends.fibers` closes), with one warning.
 */
const awaitSends = (sends: Sends, target: string, bound: number, stderr: OutputStream) =>
  Effect.gen(function*() {
    const left = (yield* Ref.get(sends.endBy)) - (yield* Clock.currentTimeMillis)
    yield* FiberSet.awaitEmpty(sends.fibers).pipe(Effect.interruptible, Effect.timeoutOption(Duration.millis(Math.max(0, left))))
    if ((yield* FiberSet.size(sends.fibers)) === 0) return
    yield* warn(
      stderr,
      `tracing: the collector at ${target} did not answer within ${bound} ms (OTEL_BSP_EXPORT_TIMEOUT): the spans still being sent are dropped`
    )
  })

/**
 * Effect's tracer, exporting every ended span over OTLP/HTTP, as protobuf (what collectors take by default) or
 * JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), in batches, and once more when the layer is released: the end
 * of the command, a signal, `serve` stopping. Then the exports in flight are waited for too, all of it within
 * `OTEL_BSP_EXPORT_TIMEOUT` of the release.
 */
export const layerOtlpExport = (config: OtelExport, stderr: OutputStream): Layer.Layer<never> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const target = exportTarget(config.url)
    // Its own connection pool. Released in the reverse order: the deadline is set, the exporter sends its last
    // batch, the sends still running are waited for, then cut, and only then is the pool closed.
    const context = yield* Layer.build(
      Layer.merge(layerPooledHttpClient, config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf)
    )
    const sends: Sends = {
      fibers: yield* FiberSet.make<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>(),
      endBy: yield* Ref.make(0)
    }
    yield* Effect.addFinalizer(() => awaitSends(sends, target, config.exportTimeoutMs, stderr))
    const client = reportingClient(Context.get(context, HttpClient.HttpClient), sends, target, config.requestTimeoutMs, stderr)
    const tracer = yield* OtlpTracer.make({
      url: config.url,
      resource: { serviceName: config.serviceName, attributes: config.resourceAttributes },
      headers: config.headers,
      exportInterval: Duration.millis(config.scheduleDelayMs),
      // The longest its last export may take; the deadline below bounds it together with those in flight.
      shutdownTimeout: Duration.millis(config.exportTimeoutMs)
    }).pipe(Effect.provideService(HttpClient.HttpClient, client), Effect.provide(context))
    yield* Effect.addFinalizer(() => Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(sends.endBy, now + config.exportTimeoutMs)))
    return Layer.setTracer(tracer)
  }))
