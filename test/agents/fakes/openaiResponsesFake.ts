/**
 * A loopback fake of OpenAI's Responses API (`POST /v1/responses`, streamed), for Codex given a `model_provider` with
 * this `base_url` and `wire_api = "responses"`. Every request is recorded (vendorFake.ts).
 */
import { piecesOf, startSse, startVendorFake, type VendorExchange, type VendorFake, writeJson, writeSse } from "./vendorFake.js"

const modelOf = (body: unknown): string =>
  typeof body === "object" && body !== null && "model" in body && typeof body.model === "string" ? body.model : "gpt-fake"

const usage = {
  input_tokens: 15,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 24
}

const answer = ({ call, res, reply }: VendorExchange): void => {
  if (reply.kind === "status") {
    writeJson(res, reply.status, {
      error: { type: reply.status === 429 ? "rate_limit_exceeded" : "invalid_request_error", message: reply.message, code: null }
    })
    return
  }
  const response = {
    id: "resp_fake",
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: modelOf(call.body),
    status: "in_progress",
    output: []
  }
  startSse(res)
  let sequence = 0
  const send = (data: Record<string, unknown>) => writeSse(res, { ...data, sequence_number: sequence++ }, String(data["type"]))
  send({ type: "response.created", response })
  send({ type: "response.in_progress", response })
  const item = { id: "msg_fake", type: "message", role: "assistant", status: "in_progress", content: [] }
  send({ type: "response.output_item.added", output_index: 0, item })
  send({
    type: "response.content_part.added",
    item_id: item.id,
    output_index: 0,
    content_index: 0,
    part: { type: "output_text", text: "", annotations: [] }
  })
  const pieces = reply.kind === "hang" ? [reply.text] : piecesOf(reply.text, reply.chunks ?? 3)
  for (const delta of pieces) send({ type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta })
  if (reply.kind === "hang") return
  const done = { ...item, status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] }
  send({ type: "response.output_text.done", item_id: item.id, output_index: 0, content_index: 0, text: reply.text })
  send({ type: "response.output_item.done", output_index: 0, item: done })
  send({ type: "response.completed", response: { ...response, status: "completed", output: [done], usage } })
  res.end()
}

const handle = (exchange: VendorExchange): void => {
  const { call, res } = exchange
  const path = call.path.split("?")[0]
  if (call.method === "POST" && path === "/v1/responses") return answer(exchange)
  if (call.method === "GET" && path === "/v1/models") return writeJson(res, 200, { object: "list", data: [] })
  writeJson(res, 404, { error: { type: "invalid_request_error", message: `no route ${call.method} ${path}` } })
}

export const startOpenAiResponsesFake = (): Promise<VendorFake> => startVendorFake(handle)
