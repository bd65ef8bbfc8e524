/**
 * A loopback fake of Anthropic's Messages API (`POST /v1/messages`, streaming and not), for Claude Code pointed at
 * it with `ANTHROPIC_BASE_URL`. Every request is recorded (vendorFake.ts); the scripted reply answers each one.
 */
import { piecesOf, startSse, startVendorFake, type VendorExchange, type VendorFake, writeJson, writeSse } from "./vendorFake.js"

const ERROR_TYPES: Readonly<Record<number, string>> = {
  401: "authentication_error",
  404: "not_found_error",
  429: "rate_limit_error",
  529: "overloaded_error"
}

const modelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && "model" in body && typeof body.model === "string" ? body.model : "claude-fake"

const streams = (body: unknown): boolean => typeof body === "object" && body !== null && "stream" in body && body.stream === true

const usage = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

const answer = ({ call, res, reply }: VendorExchange): void => {
  if (reply.kind === "status") {
    writeJson(res, reply.status, { type: "error", error: { type: ERROR_TYPES[reply.status] ?? "api_error", message: reply.message } })
    return
  }
  const model = modelOf(call.body)
  const message = { id: "msg_fake", type: "message", role: "assistant", model, stop_sequence: null }
  if (!streams(call.body)) {
    writeJson(res, 200, { ...message, content: [{ type: "text", text: reply.text }], stop_reason: "end_turn", usage })
    return
  }
  startSse(res)
  writeSse(
    res,
    { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
    "message_start"
  )
  writeSse(res, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start")
  const pieces = reply.kind === "hang" ? [reply.text] : piecesOf(reply.text, reply.chunks ?? 3)
  for (const text of pieces) {
    writeSse(res, { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta")
  }
  if (reply.kind === "hang") return
  writeSse(res, { type: "content_block_stop", index: 0 }, "content_block_stop")
  writeSse(res, {
    type: "message_delta",
    delta: { stop_reason: "end_turn", stop_sequence: null },
    usage: { output_tokens: usage.output_tokens }
  }, "message_delta")
  writeSse(res, { type: "message_stop" }, "message_stop")
  res.end()
}

const handle = (exchange: VendorExchange): void => {
  const { call, res } = exchange
  const path = call.path.split("?")[0]
  if (call.method === "POST" && path === "/v1/messages") return answer(exchange)
  if (call.method === "POST" && path === "/v1/messages/count_tokens") return writeJson(res, 200, { input_tokens: 12 })
  writeJson(res, 404, { type: "error", error: { type: "not_found_error", message: `no route ${call.method} ${path}` } })
}

export const startAnthropicFake = (): Promise<VendorFake> => startVendorFake(handle)
