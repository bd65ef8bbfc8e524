import type { HttpClientError } from "@effect/platform"
import { Readable } from "node:stream"
import { NetworkError, type ProviderError, ResponseTooLarge } from "../../../domain/errors.js"

/** What reading a body needs to know to type its failures. */
export interface BodyContext {
  readonly model: string
  readonly maxBytes: number
}

export const transportError = (model: string, error: HttpClientError.HttpClientError): NetworkError =>
  new NetworkError({
    model,
    message: `${error._tag === "RequestError" ? "Network error" : "Network error while reading the answer"}: ${
      describeCause(error.cause) ?? error.reason
    }`
  })

const describeCause = (cause: unknown): string | undefined => {
  if (!(cause instanceof Error)) return undefined
  const inner: unknown = "cause" in cause ? cause.cause : undefined
  const code: unknown = "code" in cause ? cause.code : undefined
  return [cause.message, typeof code === "string" ? code : undefined, describeCause(inner)].filter(Boolean).join(": ")
}

export const tooLarge = (model: string, maxBytes: number) =>
  new ResponseTooLarge({
    model,
    limitBytes: maxBytes,
    message: `Response larger than ${maxBytes.toLocaleString("en-US")} bytes (--max-response-bytes): connection closed`
  })

/** Counts a body's bytes against the cap: past it, the answer ends and its connection is closed. */
export const byteCap = (context: BodyContext) => {
  let size = 0
  return (bytes: Uint8Array): ProviderError | undefined => {
    size += bytes.length
    return size > context.maxBytes ? tooLarge(context.model, context.maxBytes) : undefined
  }
}

/** A property of an object, if `value` is one. */
const field = (value: unknown, name: string): unknown => typeof value === "object" && value !== null ? Reflect.get(value, name) : undefined

/**
 * undici's body behind the platform's response, when it is one: the platform's client wraps its response
 * (`original`, to abort it on interruption), whose `source` is undici's answer, its body a Node `Readable`. Read
 * defensively: any other response gives undefined.
 */
export const undiciBody = (response: object): Readable | undefined => {
  const body = field(field(field(response, "original") ?? response, "source"), "body")
  return body instanceof Readable ? body : undefined
}

/**
 * Whether undici has received the whole body of `response`: true from the moment the body's end came off the
 * socket, before the stream's reader has seen it. Node says the body ended only in the stream's state
 * (`readableEnded` waits for the `end` event). Undefined when the body is not undici's (cannot tell).
 */
export const bodyEnded = (response: object): (() => boolean) | undefined => {
  const body = undiciBody(response)
  if (body === undefined) return undefined
  return () => field(field(body, "_readableState"), "ended") === true
}
