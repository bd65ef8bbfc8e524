/**
 * The part every loopback fake of a vendor's API shares (Anthropic, OpenAI Responses, Gemini): a `node:http`
 * server on 127.0.0.1 that records every request (path, headers, parsed body) and when its client went away, and
 * answers by the vendor's own `handle`. Plain node, no Effect: the CLIs under test are the clients.
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** How the fake answers a model call: a text in `chunks` streamed pieces, an HTTP error, or part then a hang. */
export type VendorReply =
  | { readonly kind: "text"; readonly text: string; readonly chunks?: number }
  /** Streams `text`, then keeps the response open until the client goes away (a cancel test's mid-stream). */
  | { readonly kind: "hang"; readonly text: string }
  | { readonly kind: "status"; readonly status: number; readonly message: string }

export interface RecordedCall {
  readonly method: string
  /** Pathname and query, as sent. */
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The parsed JSON body (the raw text if it was not JSON, undefined when empty). */
  readonly body: unknown
  readonly startedAt: number
  /** When the response ended or the client went away. */
  endedAt?: number
  /** The client went away before the response ended. */
  aborted: boolean
}

/** What a vendor's handler gets: the request, the response to write, and the reply scripted for model calls. */
export interface VendorExchange {
  readonly call: RecordedCall
  readonly res: http.ServerResponse
  readonly reply: VendorReply
}

export interface VendorFake {
  /** The base URL to give the CLI, e.g. `http://127.0.0.1:PORT`. */
  readonly url: string
  readonly calls: ReadonlyArray<RecordedCall>
  setReply(reply: VendorReply): void
  /** Resolves with the first call that `test` accepts, once it has arrived. */
  waitFor(test: (call: RecordedCall) => boolean, timeoutMs?: number): Promise<RecordedCall>
  close(): Promise<void>
}

/** Splits `text` into `n` pieces of near-equal length (never an empty piece). */
export const piecesOf = (text: string, n: number): ReadonlyArray<string> => {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)))
  const pieces: Array<string> = []
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size))
  return pieces
}

/** An SSE event: `event:` when named, and one `data:` line of JSON. */
export const writeSse = (res: http.ServerResponse, data: unknown, event?: string): void => {
  res.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`)
}

export const startSse = (res: http.ServerResponse): void => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
}

export const writeJson = (res: http.ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const parse = (text: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** Starts a fake on an ephemeral loopback port, answering with `handle` (which must end or hold `res`). */
export const startVendorFake = async (
  handle: (exchange: VendorExchange) => void,
  initial: VendorReply = { kind: "text", text: "Answer from the fake." }
): Promise<VendorFake> => {
  const calls: Array<RecordedCall> = []
  const sockets = new Set<Socket>()
  const waiters = new Set<() => void>()
  let reply = initial
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part: Buffer) => parts.push(part))
    req.on("end", () => {
      const call: RecordedCall = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        body: parse(Buffer.concat(parts).toString("utf8")),
        startedAt: Date.now(),
        aborted: false
      }
      calls.push(call)
      res.on("close", () => {
        call.endedAt = Date.now()
        call.aborted = !res.writableFinished
        for (const wake of waiters) wake()
      })
      for (const wake of waiters) wake()
      handle({ call, res, reply })
    })
  })
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    setReply: (next) => {
      reply = next
    },
    waitFor: (test, timeoutMs = 30_000) =>
      new Promise<RecordedCall>((resolve, reject) => {
        const check = () => {
          const found = calls.find(test)
          if (found === undefined) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve(found)
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`no such call within ${timeoutMs} ms; calls: ${calls.map((c) => `${c.method} ${c.path}`).join(", ")}`))
        }, timeoutMs)
        waiters.add(check)
        check()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
