import * as OtlpSerialization from "@effect/opentelemetry/OtlpSerialization"
import * as OtlpTracer from "@effect/opentelemetry/OtlpTracer"
import { HttpClient, type HttpClientError } from "@effect/platform"
import { Duration, Effect, Layer } from "effect"
import { exportTarget, type OtelExport } from "../settings/otelEnvironment.js"
import { layerPooledHttpClient } from "./httpClientPool.js"
import { formatStderrLine } from "./logging.js"
import type { OutputStream } from "./processIo.js"

// Built only when an OTLP endpoint is set (services/tracing.ts): a process that exports nothing makes no
// exporter, no connection pool of its own and no span of ours.

/** Why an export failed, in words that name no header (the collector's key is in them). */
const reasonOf = (error: HttpClientError.HttpClientError): string =>
  error._tag === "ResponseError" ? `HTTP ${error.response.status}` : error.cause instanceof Error ? error.cause.message : error.reason

/**
 * The exporter's HTTP client: its own connection pool, spans of its own never traced, and the first failure
 * said once on stderr (the exporter itself drops failed batches silently). Not through the log: the
 * exporter's fiber may outlive the command's logger.
 */
const reportingClient = (target: string, stderr: OutputStream) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) => {
      let warned = false
      return client.pipe(
        HttpClient.filterStatusOk,
        HttpClient.tapError((error) =>
          Effect.sync(() => {
            if (warned) return
            warned = true
            const text = `tracing: cannot export spans to ${target} (${reasonOf(error)}); they are dropped, the work goes on`
            stderr.write(`${formatStderrLine({ level: "warning", date: new Date(), text, context: [] })}\n`)
          })
        )
      )
    })
  ).pipe(Layer.provide(layerPooledHttpClient))

/**
 * Effect's tracer, exporting every ended span over OTLP/HTTP, as protobuf (what collectors take by default) or
 * JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), in batches, and once more when the layer is released: the end
 * of the command, a signal, `serve` stopping.
 */
export const layerOtlpExport = (config: OtelExport, stderr: OutputStream): Layer.Layer<never> =>
  OtlpTracer.layer({
    url: config.url,
    resource: { serviceName: config.serviceName, attributes: config.resourceAttributes },
    headers: config.headers,
    exportInterval: Duration.millis(config.scheduleDelayMs),
    // The longest the last export may hold up the end of a command (`ask`, `serve`, a signal): a collector that
    // does not answer costs this much, and then its spans are dropped.
    shutdownTimeout: Duration.millis(config.exportTimeoutMs)
  }).pipe(
    Layer.provide(config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(reportingClient(exportTarget(config.url), stderr))
  )
