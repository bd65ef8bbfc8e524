/**
 * A loopback OTLP/HTTP trace receiver for tests: `POST /v1/traces` (or any path), protobuf or JSON, decoded
 * with the OpenTelemetry project's own generated protobuf code. Keeps every span it takes, flattened.
 *
 * A batch is taken when it is answered, as by a collector that commits what it acknowledges: an export the
 * exporter gave up on before the answer (its connection closed) is not delivered, and its spans go to `dropped`.
 */
import root from "@opentelemetry/otlp-transformer/build/src/generated/root.js"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export type AttributeValue = string | number | boolean | ReadonlyArray<AttributeValue> | undefined

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, AttributeValue>>
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }>
  readonly resource: Readonly<Record<string, AttributeValue>>
}

export interface ReceivedRequest {
  readonly path: string
  readonly contentType: string
  readonly headers: http.IncomingHttpHeaders
}

export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  /** The spans of the batches answered. */
  readonly spans: Array<ReceivedSpan>
  /** The spans of the batches whose exporter went away before they were answered. */
  readonly dropped: Array<ReceivedSpan>
  readonly requests: Array<ReceivedRequest>
  readonly close: () => Promise<void>
}

export interface OtlpReceiverOptions {
  /**
   * When the held batches are answered, asked each time one arrives with every span arrived so far (answered or
   * not): a slow collector. "never": a collector that never answers. Default: each at once.
   */
  readonly answerWhen?: ((arrived: ReadonlyArray<ReceivedSpan>) => boolean) | "never"
}

interface AnyValue {
  readonly stringValue?: string | null
  readonly boolValue?: boolean | null
  readonly intValue?: number | string | null
  readonly doubleValue?: number | null
  readonly arrayValue?: { readonly values?: ReadonlyArray<AnyValue> | null } | null
}
interface KeyValue {
  readonly key: string
  readonly value?: AnyValue | null
}

const valueOf = (v: AnyValue | null | undefined): AttributeValue => {
  if (v === null || v === undefined) return undefined
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue)
  if (v.doubleValue !== undefined && v.doubleValue !== null) return v.doubleValue
  if (v.arrayValue !== undefined && v.arrayValue !== null) return (v.arrayValue.values ?? []).map(valueOf)
  return undefined
}

const attributesOf = (list: ReadonlyArray<KeyValue> | null | undefined): Record<string, AttributeValue> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

/** An id as the protobuf decoder gives it (bytes) or as JSON does (hex): hex. */
const hexOf = (id: unknown): string | undefined => {
  if (id === undefined || id === null) return undefined
  const hex = typeof id === "string" ? id : Buffer.from(id as Uint8Array).toString("hex")
  return hex === "" ? undefined : hex
}

interface ExportRequest {
  readonly resourceSpans?:
    | ReadonlyArray<{
      readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> | null } | null
      readonly scopeSpans?:
        | ReadonlyArray<{
          readonly spans?:
            | ReadonlyArray<{
              readonly traceId?: unknown
              readonly spanId?: unknown
              readonly parentSpanId?: unknown
              readonly name?: string
              readonly kind?: number
              readonly attributes?: ReadonlyArray<KeyValue> | null
              readonly events?: ReadonlyArray<{ readonly name?: string; readonly attributes?: ReadonlyArray<KeyValue> | null }> | null
            }>
            | null
        }>
        | null
    }>
    | null
}

/** The generated module is typed as a bare protobufjs `Root`; its static code holds the message types. */
interface GeneratedRoot {
  readonly opentelemetry: {
    readonly proto: {
      readonly collector: { readonly trace: { readonly v1: { readonly ExportTraceServiceRequest: { decode(body: Uint8Array): unknown } } } }
    }
  }
}
const ExportTraceServiceRequest = (root as unknown as GeneratedRoot).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest

const decode = (body: Buffer, contentType: string): ExportRequest =>
  contentType.includes("json")
    ? (JSON.parse(body.toString("utf8")) as ExportRequest)
    : (ExportTraceServiceRequest.decode(body) as unknown as ExportRequest)

const flatten = (request: ExportRequest): Array<ReceivedSpan> =>
  (request.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes)
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((span): ReceivedSpan => ({
        traceId: hexOf(span.traceId) ?? "",
        spanId: hexOf(span.spanId) ?? "",
        parentSpanId: hexOf(span.parentSpanId),
        name: span.name ?? "",
        kind: span.kind ?? 0,
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((e) => ({ name: e.name ?? "", attributes: attributesOf(e.attributes) })),
        resource
      }))
    )
  })

interface Held {
  readonly spans: ReadonlyArray<ReceivedSpan>
  readonly res: http.ServerResponse
}

/** Starts a receiver on 127.0.0.1 with an ephemeral port. */
export const startOtlpReceiver = async (options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> => {
  const spans: Array<ReceivedSpan> = []
  const dropped: Array<ReceivedSpan> = []
  const requests: Array<ReceivedRequest> = []
  const arrived: Array<ReceivedSpan> = []
  let held: Array<Held> = []
  const answerWhen = options.answerWhen ?? (() => true)
  const answerHeld = () => {
    if (answerWhen === "never" || !answerWhen(arrived)) return
    const answering = held
    held = []
    for (const { spans: batch, res } of answering) {
      // Gone before its answer: the exporter cannot know it was delivered, so it was not.
      if (res.socket === null || res.socket.destroyed) dropped.push(...batch)
      else {
        spans.push(...batch)
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      }
    }
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const contentType = req.headers["content-type"] ?? ""
      requests.push({ path: req.url ?? "", contentType, headers: req.headers })
      let batch: Array<ReceivedSpan>
      try {
        batch = flatten(decode(Buffer.concat(chunks), contentType))
      } catch (error) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(error))
        return
      }
      arrived.push(...batch)
      const entry = { spans: batch, res }
      held.push(entry)
      res.on("close", () => {
        if (!held.includes(entry)) return
        held = held.filter((h) => h !== entry)
        dropped.push(...batch)
      })
      answerHeld()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    dropped,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
