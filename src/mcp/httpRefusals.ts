import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Effect, Either, Option } from "effect"
import { makeRefusalLimiter } from "./httpGuard.js"
import { serverOnly } from "./logSink.js"
import { checkBody } from "./protocolErrors.js"

// What `serve --http` answers a request it will not serve, and what it logs of it.

/** A refused request of one kind is logged once in this time (the next line counts those left out). */
const REFUSAL_LOG_WINDOW_MS = 60_000

/** A JSON-RPC error as the SDK's transport writes its own refusals, so that clients show the message. */
export const refuse = (status: number, message: string, headers: Record<string, string> = {}, code = -32000) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers })

export const remoteOf = (request: HttpServerRequest.HttpServerRequest) => Option.getOrElse(request.remoteAddress, () => "?")

export type RefusalLog = (
  request: HttpServerRequest.HttpServerRequest,
  status: number,
  message: string,
  kind: string
) => Effect.Effect<void>

/**
 * Logs a refused request on stderr and in the log file but never to the sessions: once per minute of each
 * `kind`, then with a count of those left out (`log`). Said without the request's own text: only what the
 * server decided, and from where. `flush` says, on shutdown, how many no line has told.
 */
export const makeRefusalLog = (): { readonly log: RefusalLog; readonly flush: Effect.Effect<void> } => {
  const limiter = makeRefusalLimiter(REFUSAL_LOG_WINDOW_MS)
  return {
    log: (request, status, message, kind) =>
      Effect.gen(function*() {
        const { log, suppressed } = limiter.check(`${status} ${kind}`, yield* Clock.currentTimeMillis)
        if (!log) return
        const left = suppressed > 0 ? ` (${suppressed} more like it since the last such line, not logged)` : ""
        yield* serverOnly(Effect.logWarning(`HTTP ${status} for ${request.method} from ${remoteOf(request)}: ${message}${left}`))
      }),
    flush: Effect.suspend(() => {
      const left = limiter.unreported()
      return left === 0
        ? Effect.void
        : Effect.logWarning(`HTTP: ${left} more refused request${left === 1 ? "" : "s"} not logged (one line a minute per kind)`)
    })
  }
}

/**
 * The body's text, read up to `maxBytes`; none when it is longer. Not `request.text` under `withMaxBodySize`: past
 * the limit that destroys the request's stream, and with it the socket, so a chunked body over the limit got a
 * closed connection instead of its 413. Here reading just stops, and the socket stays for the answer.
 */
const boundedText = (request: HttpServerRequest.HttpServerRequest, maxBytes: number): Effect.Effect<Option.Option<string>, Error> =>
  Effect.async((resume) => {
    const incoming = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => {
      incoming.off("data", onData).off("end", onEnd).off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= maxBytes) return void chunks.push(chunk)
      stop()
      incoming.pause()
      resume(Effect.succeed(Option.none()))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Option.some(Buffer.concat(chunks).toString("utf8"))))
    }
    const onError = (error: Error) => {
      stop()
      resume(Effect.fail(error))
    }
    incoming.on("data", onData).on("end", onEnd).on("error", onError)
    return Effect.sync(stop)
  })

/**
 * A POST's body, read within `maxBodyBytes` and checked as JSON-RPC before the SDK sees it: the parsed
 * message or batch, or the answer to send instead (413; -32700, -32600 or -32602 with 400 for junk and
 * for a batch with a repeated request id).
 */
export const makeBodyCheck = (maxBodyBytes: number, logRefusal: RefusalLog) =>
(
  request: HttpServerRequest.HttpServerRequest,
  cors: Record<string, string>
): Effect.Effect<Either.Either<JSONRPCMessage | ReadonlyArray<JSONRPCMessage>, HttpServerResponse.HttpServerResponse>> =>
  Effect.gen(function*() {
    // A declared length over the limit is refused unread; a longer body without one stops being read there.
    const declared = Number(request.headers["content-length"] ?? 0)
    const text = declared > maxBodyBytes
      ? undefined
      : yield* boundedText(request, maxBodyBytes).pipe(Effect.map(Option.getOrUndefined), Effect.orElseSucceed(() => undefined))
    if (text === undefined) {
      const message = `Payload Too Large: Request body must not exceed ${maxBodyBytes} bytes`
      // The connection closes after the answer: Node would otherwise read the rest of the body, however long.
      const answer = refuse(413, message, { ...cors, connection: "close" })
      return Either.left(yield* Effect.as(logRefusal(request, 413, message, "too large"), answer))
    }
    const value = Either.try(() => JSON.parse(text) as unknown)
    if (Either.isLeft(value)) {
      const message = "Parse error: Invalid JSON"
      return Either.left(yield* Effect.as(logRefusal(request, 400, message, "not JSON"), refuse(400, message, cors, -32700)))
    }
    const incoming = checkBody(value.right)
    if (incoming._tag === "Messages") {
      // A single message is handed on as one, a batch as an array: the SDK answers each the same way.
      const [first] = incoming.messages
      return Either.right(Array.isArray(value.right) || first === undefined ? incoming.messages : first)
    }
    yield* logRefusal(request, 400, incoming.log, "invalid JSON-RPC")
    const answer = incoming.answers[0]
    // A malformed response of the client's gets no JSON-RPC answer of its own: a bare refusal then.
    return Either.left(
      answer === undefined ? refuse(400, incoming.log, cors, -32600) : HttpServerResponse.unsafeJson(answer, { status: 400, headers: cors })
    )
  })
