import type { HttpClientError } from "@effect/platform"
import { Cause, Channel, Chunk, type Effect, Either } from "effect"
import { InvalidResponse, type ProviderError } from "../../../domain/errors.js"
import type { CacheOutcome, Completion, ModelPart } from "../../../domain/modelCall.js"
import type { Redact, StreamRedact } from "../../../domain/redact.js"
import { makeSseSplitter, type SseEvent, type SseSplitter } from "../../sseEvents.js"
import { byteCap, tooLarge, transportError } from "./body.js"
import { annotationList, citationsOf } from "./citations.js"
import { providerErrorOf, snippet, usageOf } from "./response.js"
import { decodeStreamChunk, type WireUsage } from "./wire.js"

export interface StreamContext {
  readonly model: string
  readonly status: number
  readonly maxBytes: number
  readonly redact: Redact
  /** A key redactor for text that comes in pieces: one per streamed field of a call. */
  readonly streamRedact: () => StreamRedact
  /** What the response cache did, as the response's headers said. */
  readonly cache?: CacheOutcome | undefined
  /** Whether the transport has received the whole body (see body.ts's `bodyEnded`), when it can tell. */
  readonly bodyEnded?: (() => boolean) | undefined
}

/** What the body has said so far besides its text: one per call, filled in place by the reads. */
interface Answer {
  servedBy: string | undefined
  finishReason: string | undefined
  usage: WireUsage | undefined
  annotations: Array<unknown>
  /** Some text that is not blank came: an answer that ends without any is no answer. */
  hasText: boolean
  /** An error event, a chunk that is not one, the byte cap or the transport: the answer ends here. */
  failure: ProviderError | undefined
  /** `[DONE]` came: what follows is only the end of the body. */
  done: boolean
}

/** The last parts of a whole answer: usage, citations, then how it finished. */
const lastParts = (completion: Omit<Completion, "content">, ended?: boolean): Array<ModelPart> => {
  const parts: Array<ModelPart> = []
  if (completion.usage !== undefined) parts.push({ _tag: "Usage", usage: completion.usage })
  if (completion.citations !== undefined) parts.push({ _tag: "Citations", citations: completion.citations })
  parts.push({
    _tag: "Finish",
    reason: completion.finishReason,
    servedBy: completion.servedBy,
    ...(completion.cache !== undefined ? { cache: completion.cache } : {}),
    ...(ended === true ? { ended } : {})
  })
  return parts
}

/** A whole (not streamed) answer as parts: its text, then the last parts. */
export const partsOfCompletion = (completion: Completion): Chunk.Chunk<ModelPart> =>
  Chunk.unsafeFromArray([{ _tag: "TextDelta", text: completion.content }, ...lastParts(completion, true)])

/**
 * The stages of a streamed answer — the byte cap, bytes to text, text to SSE events, events to decoded
 * chunks, chunks to parts — as plain functions of one network read ({@link readParts}), called by the
 * channel {@link sseParts}: as separate stream stages each would cost a channel step per read, and a token
 * stream brings one event per read (see bench/README.md). A read gives at most one text delta and one
 * reasoning delta, whatever the number of tokens in it.
 */
interface Reading {
  readonly context: StreamContext
  readonly answer: Answer
  readonly cap: (bytes: Uint8Array) => ProviderError | undefined
  readonly decoder: InstanceType<typeof TextDecoder>
  readonly splitter: SseSplitter
  readonly text: StreamRedact
  readonly reasoning: StreamRedact
}

const makeReading = (context: StreamContext): Reading => ({
  context,
  answer: {
    servedBy: undefined,
    finishReason: undefined,
    usage: undefined,
    annotations: [],
    hasText: false,
    failure: undefined,
    done: false
  },
  cap: byteCap(context),
  decoder: new TextDecoder(),
  splitter: makeSseSplitter({ maxEventChars: context.maxBytes }),
  text: context.streamRedact(),
  reasoning: context.streamRedact()
})

/** A read's text as parts, each cleaned of the key. */
const deltas = (r: Reading, content: string, thought: string): Array<ModelPart> => {
  const parts: Array<ModelPart> = []
  const reasoning = thought === "" ? "" : r.reasoning.push(thought)
  if (reasoning !== "") parts.push({ _tag: "ReasoningDelta", text: reasoning })
  if (!r.answer.hasText && content.trim() !== "") r.answer.hasText = true
  const text = content === "" ? "" : r.text.push(content)
  if (text !== "") parts.push({ _tag: "TextDelta", text })
  return parts
}

/** Folds the events into the answer; returns the parts they carried (up to a failure, which ends the answer). */
const foldEvents = (r: Reading, events: ReadonlyArray<SseEvent> | undefined): Array<ModelPart> => {
  const { answer, context } = r
  if (events === undefined) {
    answer.failure = tooLarge(context.model, context.maxBytes)
    return []
  }
  let content = ""
  let thought = ""
  for (const event of events) {
    if (answer.done) break
    if (event.data === "[DONE]" || event.data.trim() === "[DONE]") {
      answer.done = true
      break
    }
    const decoded = decodeStreamChunk(event.data)
    if (Either.isLeft(decoded)) {
      const message = `Invalid stream chunk: ${snippet(context.redact(event.data))}`
      answer.failure = new InvalidResponse({ model: context.model, message, httpStatus: context.status })
      break
    }
    const chunk = decoded.right
    const choice = chunk.choices?.[0]
    const error = chunk.error ?? choice?.error
    if (error || choice?.finish_reason === "error") {
      answer.failure = providerErrorOf(context.model, error, "mid-stream", context.redact, { transientWithoutCode: true })
      break
    }
    if (chunk.model) answer.servedBy = chunk.model
    if (choice?.finish_reason) answer.finishReason = choice.finish_reason
    if (chunk.usage) answer.usage = chunk.usage
    const delta = choice?.delta
    if (delta?.content) content += delta.content
    if (delta?.reasoning) thought += delta.reasoning
    const cited = annotationList(delta?.annotations)
    if (cited.length > 0) answer.annotations.push(...cited)
  }
  return content === "" && thought === "" ? [] : deltas(r, content, thought)
}

/** One network read (or the few that arrived together): its parts. */
const readParts = (r: Reading, reads: Chunk.Chunk<Uint8Array>): Array<ModelPart> => {
  let decoded = ""
  for (const bytes of reads) {
    const failure = r.cap(bytes)
    if (failure !== undefined) {
      const before = foldEvents(r, r.splitter.push(decoded))
      r.answer.failure = failure
      return before
    }
    decoded += r.decoder.decode(bytes, { stream: true })
  }
  return foldEvents(r, r.splitter.push(decoded))
}

/** The answer ends (`[DONE]`, the body's end, a failure): what was held back, then the last parts (or the failure). */
const endParts = (r: Reading): Array<ModelPart> => {
  const { answer, context } = r
  const parts: Array<ModelPart> = []
  if (answer.failure === undefined && !answer.done) {
    const rest = r.splitter.push(r.decoder.decode())
    const last = r.splitter.end()
    parts.push(...foldEvents(r, rest === undefined || last === undefined ? undefined : [...rest, ...last]))
  }
  const held = r.text.end()
  if (held !== "") parts.push({ _tag: "TextDelta", text: held })
  // A reply that fails or carries no text may still have been billed: its usage goes before the failure.
  const billed = (): Array<ModelPart> => {
    const usage = usageOf(answer.usage)
    return usage === undefined ? parts : parts.concat({ _tag: "Usage", usage })
  }
  if (answer.failure !== undefined) return billed()
  if (!answer.hasText) {
    const message = "Invalid response: the stream carried no content"
    answer.failure = new InvalidResponse({ model: context.model, message, httpStatus: context.status })
    return billed()
  }
  return parts.concat(lastParts({
    servedBy: answer.servedBy !== undefined ? context.redact(answer.servedBy) : context.model,
    usage: usageOf(answer.usage, context.cache),
    finishReason: answer.finishReason,
    citations: citationsOf(answer.annotations, context.redact),
    ...(context.cache !== undefined ? { cache: context.cache } : {})
  }, answer.done && context.bodyEnded?.() === true))
}

type Parts<In, InErr> = Channel.Channel<Chunk.Chunk<ModelPart>, In, ProviderError, InErr, void, unknown>

/** What to do with the next read of the body: `Channel.readWithCause`'s three cases. */
export interface OnRead<In, InErr> {
  readonly onInput: (reads: Chunk.Chunk<Uint8Array>) => Parts<In, InErr>
  readonly onFailure: (cause: Cause.Cause<HttpClientError.ResponseError>) => Parts<In, InErr>
  readonly onDone: () => Parts<In, InErr>
}

/** How the body is read, one read at a time: the channel's input (`Channel.readWithCause`), or a source of its own. */
export type ReadStep<In, InErr> = (on: OnRead<In, InErr>) => Parts<In, InErr>

/**
 * The SSE splitter as a channel over the body's reads, a chunk of parts out per read. At `[DONE]` the
 * answer's last parts go out at once; the rest of the body is then read and ignored, so that the
 * connection goes back to the pool (the caller's fold bounds how long it waits for that: answerFold.ts).
 * A failure ends it after the parts before it. One read loop, its steps built once: a read costs one read
 * and one write of the channel, and no effect of its own.
 */
const partsOf = <In, InErr>(context: StreamContext, next: ReadStep<In, InErr>): Parts<In, InErr> =>
  Channel.suspend(() => {
    const reading = makeReading(context)
    const answer = reading.answer
    const emit = (parts: Array<ModelPart>, then: Parts<In, InErr>): Parts<In, InErr> =>
      parts.length === 0 ? then : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(parts)), then)
    /** The answer ends: what was held back and its last parts, or its failure. */
    const close = (parts: Array<ModelPart>, then: Parts<In, InErr>): Parts<In, InErr> => {
      const last = endParts(reading)
      return emit(parts.length === 0 ? last : parts.concat(last), answer.failure === undefined ? then : Channel.fail(answer.failure))
    }
    const onFailure = (cause: Cause.Cause<HttpClientError.ResponseError>): Parts<In, InErr> =>
      Either.match(Cause.failureOrCause(cause), {
        onLeft: (error) => {
          answer.failure = transportError(context.model, error)
          return answer.done ? Channel.fail(answer.failure) : close([], Channel.void)
        },
        onRight: Channel.failCause
      })
    const drain: Parts<In, InErr> = next({ onInput: () => drain, onFailure, onDone: () => Channel.void })
    const read: Parts<In, InErr> = next({
      onInput: (reads) => {
        const parts = readParts(reading, reads)
        if (answer.failure !== undefined || answer.done) return close(parts, drain)
        return emit(parts, read)
      },
      onFailure,
      onDone: () => close([], Channel.void)
    })
    return read
  })

/** The SSE splitter as a channel: the body's reads in (a stream piped through it), parts out. */
export const sseParts = (context: StreamContext): Parts<Chunk.Chunk<Uint8Array>, HttpClientError.ResponseError> =>
  partsOf(context, (on) => Channel.readWithCause(on))

/**
 * The SSE splitter reading the body itself, `reads` one read at a time (readable.ts), then `release`d: one
 * channel rather than a channel of reads piped into this one (a pipe costs each read a step of both).
 */
export const bodyParts = (
  context: StreamContext,
  reads: { readonly step: ReadStep<unknown, unknown>; readonly release: Effect.Effect<void> }
): Parts<unknown, unknown> => Channel.ensuring(partsOf(context, reads.step), reads.release)
