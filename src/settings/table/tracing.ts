import { switchOn } from "../kinds.js"
import { DEFAULT_EXPORT_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_SCHEDULE_DELAY_MS } from "../otelEnvironment.js"
import { type Topic, withDefault } from "../setting.js"

/** OpenTelemetry export of a run's spans (docs/tracing.md): what the spans may carry. */
export const tracingTopic: Topic = { title: "Tracing", commands: ["batch", "serve", "resynth", "eval"], namedIn: ["ask"] }

export const tracingSettings = {
  traceContent: withDefault({
    field: "traceContent",
    kind: switchOn,
    flag: "trace-content",
    env: "PARALLEL_LLM_TRACE_CONTENT",
    doc: "Prompt and answer text in exported spans (OpenTelemetry)",
    default: false,
    defaultDoc: "false"
  })
}

/**
 * OpenTelemetry's standard variables, read from the environment only (no flag, no config key): the rows of
 * docs/configuration.md. The exporter reads them in settings/otelEnvironment.ts.
 */
export const tracingEnvironment: ReadonlyArray<{ readonly env: string; readonly doc: string; readonly defaultDoc: string }> = [
  {
    env: "OTEL_EXPORTER_OTLP_ENDPOINT",
    doc: "OTLP/HTTP endpoint spans are exported to (`/v1/traces` is added); unset, nothing is exported",
    defaultDoc: "none (tracing off)"
  },
  {
    env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    doc: "The traces URL itself, used as it is (wins over `OTEL_EXPORTER_OTLP_ENDPOINT`)",
    defaultDoc: "none"
  },
  {
    env: "OTEL_EXPORTER_OTLP_PROTOCOL",
    doc: "How spans are encoded: `http/protobuf` or `http/json` (`grpc` is refused: a warning, tracing off); " +
      "`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` wins over it",
    defaultDoc: "`http/protobuf`"
  },
  {
    env: "OTEL_EXPORTER_OTLP_HEADERS",
    doc: "Headers of every export, `key=value,…` (a secret: never logged)",
    defaultDoc: "none"
  },
  { env: "OTEL_SERVICE_NAME", doc: "The service name spans carry", defaultDoc: "`parallel-llm`" },
  { env: "OTEL_RESOURCE_ATTRIBUTES", doc: "Resource attributes of every span, `key=value,…`", defaultDoc: "none" },
  {
    env: "OTEL_BSP_SCHEDULE_DELAY",
    doc: "Milliseconds between two exports of the spans ended meanwhile",
    defaultDoc: String(DEFAULT_SCHEDULE_DELAY_MS)
  },
  {
    env: "OTEL_EXPORTER_OTLP_TIMEOUT",
    doc: "Milliseconds one export waits for the collector's answer before it fails (its spans dropped); " +
      "`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` wins over it",
    defaultDoc: String(DEFAULT_REQUEST_TIMEOUT_MS)
  },
  {
    env: "OTEL_BSP_EXPORT_TIMEOUT",
    doc: "Milliseconds the end of a command waits for the exports still being sent (the last one too); then their spans are dropped",
    defaultDoc: String(DEFAULT_EXPORT_TIMEOUT_MS)
  }
]
