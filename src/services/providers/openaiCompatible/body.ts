import type { HttpClientError } from "@effect/platform"
import { globalValue } from "effect/GlobalValue"
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
 * Whether undici has received the whole of `body`: true from the moment the body's end came off the socket, before
 * the stream's reader has seen it. Node says the body ended only in the stream's state (`readableEnded` waits for
 * the `end` event).
 */
export const bodyEnded = (body: Readable) => (): boolean => field(field(body, "_readableState"), "ended") === true

/** The platform's registry of unread responses (@effect/platform's internal/httpClient.js `responseRegistry`). */
interface ResponseRegistry {
  readonly unregister: (response: object) => void
}
const REGISTRY_KEY = "@effect/platform/HttpClient/responseRegistry"
const isRegistry = (value: unknown): value is ResponseRegistry => typeof field(value, "unregister") === "function"

/**
 * Tells the platform that `response`'s body is read, and released, by our own reader (readable.ts): the platform
 * keeps every response it returns in a `FinalizationRegistry` that aborts its request once the response is
 * collected, and only its own `response.stream`/`text`/… take it out. Left in, every finished call is aborted
 * after the fact (an `AbortError` built with its stack trace and an abort event: ~30 ms of a 200-prompt batch). The
 * reader destroys an unfinished body itself, which aborts its request. The registry is found by the platform's
 * `globalValue` key, set as its client module loads (before any response): under another key (another platform
 * version), nothing is done and the abort stays as it was (openAiCompatible.test.ts spies on the registry).
 */
export const bodyTakenOver = (response: object): void => {
  const registry: unknown = globalValue(REGISTRY_KEY, () => undefined)
  if (isRegistry(registry)) registry.unregister(field(response, "original") ?? response)
}
