import { type Effect, Option, Schema, Tracer } from "effect"
import { withOuterSpan } from "../services/tracing.js"

// The caller's trace context on an MCP request (`params._meta.traceparent`, W3C Trace Context): a tool call's
// span continues the caller's trace, and the run it starts goes under it.

const W3C_TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** A `traceparent` header value: version 00, ids that are not all zeros; its span as a parent of ours. */
const TraceParent = Schema.transform(
  Schema.String.pipe(
    Schema.pattern(W3C_TRACEPARENT),
    Schema.filter((text) => !/^00-0{32}-/.test(text) && !/^00-[0-9a-f]{32}-0{16}-/.test(text))
  ),
  Schema.Struct({ traceId: Schema.String, spanId: Schema.String, sampled: Schema.Boolean }),
  {
    strict: true,
    decode: (text) => {
      const [, traceId = "", spanId = "", flags = "00"] = W3C_TRACEPARENT.exec(text) ?? []
      return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 }
    },
    encode: ({ sampled, spanId, traceId }) => `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`
  }
)

const RequestMeta = Schema.Struct({ traceparent: TraceParent })
const decodeMeta = Schema.decodeUnknownOption(RequestMeta)

/** The caller's span, when `_meta` carries a valid `traceparent`; a malformed one is ignored (as W3C says). */
export const callerSpan = (meta: unknown): Option.Option<Tracer.ExternalSpan> =>
  Option.map(decodeMeta(meta), ({ traceparent }) => Tracer.externalSpan(traceparent))

/**
 * A tool call in a server span of its own (`tools/call NAME`, `mcp.method.name`), under the caller's span
 * when the request carries one; only when spans are exported.
 */
export const withToolCallSpan = <A, E, R>(name: string, meta: unknown, call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  withOuterSpan(call, `tools/call ${name}`, {
    parent: callerSpan(meta),
    kind: "server",
    attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": name, "gen_ai.operation.name": "execute_tool" }
  })
