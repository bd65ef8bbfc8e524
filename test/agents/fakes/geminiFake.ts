/**
 * A loopback fake of the Gemini API (`…/models/MODEL:streamGenerateContent?alt=sse` and `:generateContent`,
 * `:countTokens`), for Gemini CLI pointed at it with `GOOGLE_GEMINI_BASE_URL`. Every request is recorded (vendorFake.ts).
 */
import { piecesOf, startSse, startVendorFake, type VendorExchange, type VendorFake, writeJson, writeSse } from "./vendorFake.js"

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  503: "UNAVAILABLE"
}

const usageMetadata = { promptTokenCount: 14, candidatesTokenCount: 8, totalTokenCount: 22 }

const chunk = (model: string, text: string, last: boolean) => ({
  candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
  ...(last ? { usageMetadata } : {}),
  modelVersion: model
})

const answer = ({ res, reply }: VendorExchange, model: string, streamed: boolean): void => {
  if (reply.kind === "status") {
    writeJson(res, reply.status, {
      error: { code: reply.status, message: reply.message, status: STATUS_NAMES[reply.status] ?? "INTERNAL" }
    })
    return
  }
  if (!streamed) return writeJson(res, 200, chunk(model, reply.text, true))
  startSse(res)
  const pieces = reply.kind === "hang" ? [reply.text] : piecesOf(reply.text, reply.chunks ?? 3)
  pieces.forEach((text, i) => writeSse(res, chunk(model, text, reply.kind === "text" && i === pieces.length - 1)))
  if (reply.kind === "text") res.end()
}

const handle = (exchange: VendorExchange): void => {
  const { call, res } = exchange
  const path = call.path.split("?")[0] ?? ""
  const match = /\/models\/([^/:]+):(\w+)$/.exec(path)
  if (call.method === "POST" && match !== null) {
    const [, model = "gemini-fake", method] = match
    if (method === "streamGenerateContent") return answer(exchange, model, true)
    if (method === "generateContent") return answer(exchange, model, false)
    if (method === "countTokens") return writeJson(res, 200, { totalTokens: 14 })
  }
  writeJson(res, 404, { error: { code: 404, message: `no route ${call.method} ${path}`, status: "NOT_FOUND" } })
}

export const startGeminiFake = (): Promise<VendorFake> => startVendorFake(handle)
