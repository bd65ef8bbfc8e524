import type { Broadcast } from "../../../domain/modelCall.js"

/**
 * OpenRouter's Broadcast fields: the run is the session, and OpenRouter's own spans of a call take our trace
 * id and nest under the call's span (`parent_span_id`), so a backend that gets both shows one tree.
 */
export const broadcastBody = (b: Broadcast) => ({
  session_id: b.sessionId,
  trace: {
    trace_id: b.traceId,
    trace_name: "parallel-llm run",
    ...(b.parentSpanId !== undefined ? { parent_span_id: b.parentSpanId } : {}),
    ...(b.generationName !== undefined ? { generation_name: b.generationName } : {})
  }
})
