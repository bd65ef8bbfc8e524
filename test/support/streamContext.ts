import { Option } from "effect"
import { makeRedact, makeStreamRedact } from "../../src/domain/redact.js"
import type { StreamContext } from "../../src/services/providers/openaiCompatible/stream.js"

/** The SSE splitter's context for a 200 answer of model `m/x`, with a 1 MB cap and nothing to redact. */
export const plainStreamContext: StreamContext = {
  model: "m/x",
  status: 200,
  maxBytes: 1_000_000,
  redact: makeRedact(Option.none()),
  streamRedact: () => makeStreamRedact(Option.none())
}
