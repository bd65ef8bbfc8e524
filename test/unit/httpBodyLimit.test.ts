import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as http from "node:http"
import { makeBodyCheck } from "../../src/mcp/httpRefusals.js"
import { itLive } from "../support/itLive.js"

// serve --http's body limit, over real HTTP on loopback: a body over the limit is answered 413 with the JSON-RPC
// error, whether its length was declared or it came chunked (that one used to get a closed connection: reading
// stopped by destroying the request's stream, and the socket with it).

const LIMIT = 2048

/** A server whose one route answers what the body check decides (the parsed message back, or the refusal). */
const serveChecked = Effect.gen(function*() {
  const check = makeBodyCheck(LIMIT, () => Effect.void)
  const server = yield* NodeHttpServer.make(() => http.createServer(), { host: "127.0.0.1", port: 0 })
  yield* server.serve(Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const checked = yield* check(request, {})
    return Either.getOrElse(Either.map(checked, (message) => HttpServerResponse.unsafeJson({ received: message })), (refusal) => refusal)
  }))
  return server.address._tag === "TcpAddress" ? server.address.port : 0
})

interface Answer {
  readonly status: number | undefined
  readonly connection: string | undefined
  readonly body: unknown
}

/** A POST of `text` in pieces of 512 bytes, chunked unless `declared`: the answer, or how the request failed. */
const post = (port: number, text: string, declared: boolean) =>
  Effect.promise(() =>
    new Promise<Answer | string>((resolve) => {
      const headers = { "content-type": "application/json", ...(declared ? { "content-length": String(Buffer.byteLength(text)) } : {}) }
      const request = http.request({ host: "127.0.0.1", port, method: "POST", path: "/", headers }, (response) => {
        let body = ""
        response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
        response.on("end", () => resolve({ status: response.statusCode, connection: response.headers.connection, body: JSON.parse(body) }))
      })
      request.on("error", (error) => resolve(error.message))
      for (let i = 0; i < text.length; i += 512) request.write(text.slice(i, i + 512))
      request.end()
    })
  )

const ping = (pad: number) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(pad) } })

const refusal = {
  jsonrpc: "2.0",
  error: { code: -32000, message: `Payload Too Large: Request body must not exceed ${LIMIT} bytes` },
  id: null
}

describe("serve --http's body limit", () => {
  itLive.scoped("a chunked body over the limit is answered 413, as one with a declared length is", () =>
    Effect.gen(function*() {
      const port = yield* serveChecked
      const big = ping(4 * LIMIT)
      expect(yield* post(port, big, false)).toEqual({ status: 413, connection: "close", body: refusal })
      expect(yield* post(port, big, true)).toEqual({ status: 413, connection: "close", body: refusal })
    }))

  itLive.scoped("a chunked body within the limit is read whole", () =>
    Effect.gen(function*() {
      const port = yield* serveChecked
      const small = ping(LIMIT - 200)
      expect(yield* post(port, small, false)).toMatchObject({ status: 200, body: { received: JSON.parse(small) } })
    }))
})
