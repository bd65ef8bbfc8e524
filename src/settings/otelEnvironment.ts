import { Either, ParseResult, Schema } from "effect"

// OpenTelemetry's standard variables, environment only (docs/tracing.md): where spans go and how this
// service names itself. Read once, when the entry point builds its services (services/tracing.ts).

/** Where and how spans are exported, when an endpoint is set. */
export interface OtelExport {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly url: string
  /** How spans are encoded: OTLP/HTTP's protobuf (the default) or its JSON. */
  readonly protocol: OtlpProtocol
  /** Sent with every export (a collector's API key): a secret, never logged. */
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  /** How often ended spans are sent while the command runs, in milliseconds (`OTEL_BSP_SCHEDULE_DELAY`). */
  readonly scheduleDelayMs: number
  /** The longest the exports still being sent may hold up the end of a command, in ms (`OTEL_BSP_EXPORT_TIMEOUT`). */
  readonly exportTimeoutMs: number
  /** The longest one export request may wait for the collector's answer, in ms (`OTEL_EXPORTER_OTLP_TIMEOUT`). */
  readonly requestTimeoutMs: number
}

/** Unset, a batch goes every 5 s (the exporter's own pace)… */
export const DEFAULT_SCHEDULE_DELAY_MS = 5_000
/** …and a collector that does not answer holds up the end of a command for 3 s, then the spans it has not taken are dropped. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 3_000
/**
 * One export request is given up after 10 s (OpenTelemetry's default): a collector that never answers would otherwise
 * hold every export of a long `serve` or `batch` open, each with its batch of spans, for as long as the process runs.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000

/** The OTLP protocols the exporter speaks: OTLP/HTTP only (gRPC is not spoken). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const
export type OtlpProtocol = typeof OTLP_PROTOCOLS[number]

const isProtocol = (text: string): text is OtlpProtocol => (OTLP_PROTOCOLS as ReadonlyArray<string>).includes(text)

const Protocol = Schema.Trim.pipe(Schema.filter(isProtocol, {
  message: (issue) =>
    `${JSON.stringify(issue.actual)} is not spoken here (OTLP/HTTP only): set ${OTLP_PROTOCOLS.join(" or ")}, or leave it unset`
}))

/** `key=value,key=value`, each part percent-encoded (the W3C Baggage form the OpenTelemetry spec names). */
const KeyValueList = Schema.transformOrFail(Schema.String, Schema.Record({ key: Schema.String, value: Schema.String }), {
  strict: true,
  decode: (text, _, ast) => {
    const pairs: Record<string, string> = {}
    const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
    for (const [i, entry] of entries.entries()) {
      const equals = entry.indexOf("=")
      const key = equals > 0 ? safeDecode(entry.slice(0, equals).trim()) : undefined
      const value = equals > 0 ? safeDecode(entry.slice(equals + 1).trim()) : undefined
      // The entry itself is never quoted back: it may hold a secret.
      if (key === undefined || key === "" || value === undefined) {
        return ParseResult.fail(new ParseResult.Type(ast, text, `entry ${i + 1} is not key=value`))
      }
      pairs[key] = value
    }
    return ParseResult.succeed(pairs)
  },
  encode: (pairs) =>
    ParseResult.succeed(Object.entries(pairs).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join(","))
})

const safeDecode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const HttpUrl = Schema.String.pipe(
  Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), {
    message: () => "not an http(s) URL"
  })
)

const Millis = Schema.compose(
  Schema.Trim.pipe(Schema.filter((text) => /^[1-9][0-9]{0,8}$/.test(text) || "not a whole number of milliseconds above 0")),
  Schema.NumberFromString
)

const decodeList = Schema.decodeUnknownEither(KeyValueList)
const decodeMillis = Schema.decodeUnknownEither(Millis)
const decodeProtocol = Schema.decodeUnknownEither(Protocol)
const decodeUrl = Schema.decodeUnknownEither(HttpUrl)

const isSet = (value: string | undefined): value is string => value !== undefined && value.trim() !== ""

/** The service's name in a trace when neither `OTEL_SERVICE_NAME` nor `service.name` says another. */
export const DEFAULT_SERVICE_NAME = "parallel-llm"

/**
 * The export the environment asks for: none without an endpoint, or what is wrong with a variable (one line
 * naming it, never its value).
 */
export const otelExportOf = (env: Readonly<Record<string, string | undefined>>): Either.Either<OtelExport | undefined, string> => {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  // The signal's own URL is used as it is; the base gets the traces path (the OTLP/HTTP spec).
  const [name, url] = isSet(traces)
    ? ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.trim()]
    : isSet(base)
    ? ["OTEL_EXPORTER_OTLP_ENDPOINT", `${base.trim().replace(/\/+$/, "")}/v1/traces`]
    : [undefined, undefined]
  if (name === undefined || url === undefined) return Either.right(undefined)
  const problem = (variable: string, error: ParseResult.ParseError) =>
    `${variable}: ${ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "invalid"}`
  const checked = decodeUrl(url)
  if (Either.isLeft(checked)) return Either.left(problem(name, checked.left))
  // The signal's own variable wins, as for the endpoint.
  const [protocolName, protocolText] = isSet(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL)
    ? ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL]
    : ["OTEL_EXPORTER_OTLP_PROTOCOL", env.OTEL_EXPORTER_OTLP_PROTOCOL]
  const protocol = isSet(protocolText) ? decodeProtocol(protocolText) : Either.right("http/protobuf" as const)
  if (Either.isLeft(protocol)) return Either.left(problem(protocolName, protocol.left))
  const headers = decodeList(env.OTEL_EXPORTER_OTLP_HEADERS ?? "")
  if (Either.isLeft(headers)) return Either.left(problem("OTEL_EXPORTER_OTLP_HEADERS", headers.left))
  const attributes = decodeList(env.OTEL_RESOURCE_ATTRIBUTES ?? "")
  if (Either.isLeft(attributes)) return Either.left(problem("OTEL_RESOURCE_ATTRIBUTES", attributes.left))
  const scheduleDelay = millisOf(env, "OTEL_BSP_SCHEDULE_DELAY", DEFAULT_SCHEDULE_DELAY_MS)
  if (Either.isLeft(scheduleDelay)) return Either.left(problem("OTEL_BSP_SCHEDULE_DELAY", scheduleDelay.left))
  const exportTimeout = millisOf(env, "OTEL_BSP_EXPORT_TIMEOUT", DEFAULT_EXPORT_TIMEOUT_MS)
  if (Either.isLeft(exportTimeout)) return Either.left(problem("OTEL_BSP_EXPORT_TIMEOUT", exportTimeout.left))
  // The signal's own variable wins, as for the endpoint.
  const timeoutName = isSet(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT) ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT"
  const requestTimeout = millisOf(env, timeoutName, DEFAULT_REQUEST_TIMEOUT_MS)
  if (Either.isLeft(requestTimeout)) return Either.left(problem(timeoutName, requestTimeout.left))
  const serviceName = isSet(env.OTEL_SERVICE_NAME)
    ? env.OTEL_SERVICE_NAME.trim()
    : attributes.right["service.name"] ?? DEFAULT_SERVICE_NAME
  return Either.right({
    url: checked.right,
    protocol: protocol.right,
    headers: headers.right,
    serviceName,
    resourceAttributes: attributes.right,
    scheduleDelayMs: scheduleDelay.right,
    exportTimeoutMs: exportTimeout.right,
    requestTimeoutMs: requestTimeout.right
  })
}

const millisOf = (env: Readonly<Record<string, string | undefined>>, name: string, otherwise: number) => {
  const text = env[name]
  return isSet(text) ? decodeMillis(text) : Either.right(otherwise)
}

/** Where spans go, as a warning may say it: no credentials, query or fragment. */
export const exportTarget = (url: string): string => {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}
