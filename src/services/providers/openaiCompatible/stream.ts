import type { HttpClientError } from "@effect/platform"
import { Channel, Chunk, Duration, Effect, Either, identity, Scope, Stream } from "effect"
import { InvalidResponse, type ProviderError } from "../../../domain/errors.js"
import type { Completion, ModelPart } from "../../../domain/modelCall.js"
import type { Redact, StreamRedact } from "../../redact.js"
import { makeSseSplitter, type SseEvent } from "../../sseEvents.js"
import { byteCap, tooLarge, transportError } from "./body.js"
import { annotationList, citationsOf } from "./citations.js"
import { providerErrorOf, snippet, usageOf } from "./response.js"
import { decodeStreamChunk, type Usage } from "./wire.js"

/** How long the rest of a streamed body may take to end after `[DONE]` before the connection is dropped. */
const DRAIN_AFTER_DONE = Duration.millis(500)

export interface StreamContext {
  readonly model: string
  readonly status: number
  readonly maxBytes: number
  readonly redact: Redact
  /** A key redactor for text that comes in pieces: one per streamed field of a call. */
  readonly streamRedact: () => StreamRedact
}

/** What the body has said so far besides its text: one per call, filled in place by the reads. */
interface Answer {
  servedBy: string | undefined
  finishReason: string | undefined
  usage: Usage | undefined
  annotations: Array<unknown>
  /** Some text that is not blank came: an answer that ends without any is no answer. */
  hasText: boolean
  /** An error event, a chunk that is not one, the byte cap or the transport: the answer ends here. */
  failure: ProviderError | undefined
  /** `[DONE]` came: what follows is only the end of the body. */
  done: boolean
}

/** The last parts of a whole answer: usage, citations, then how it finished. */
const lastParts = (completion: Omit<Completion, "content">): Array<ModelPart> => {
  const parts: Array<ModelPart> = []
  if (completion.usage !== undefined) parts.push({ _tag: "Usage", usage: completion.usage })
  if (completion.citations !== undefined) parts.push({ _tag: "Citations", citations: completion.citations })
  parts.push({ _tag: "Finish", reason: completion.finishReason, servedBy: completion.servedBy })
  return parts
}

/** A whole (not streamed) answer as parts: its text, then the last parts. */
export const partsOfCompletion = (completion: Completion): Chunk.Chunk<ModelPart> =>
  Chunk.unsafeFromArray([{ _tag: "TextDelta", text: completion.content }, ...lastParts(completion)])

/**
 * The stages of a streamed answer — the byte cap, bytes to text, text to SSE events, events to decoded
 * chunks, chunks to parts — as plain functions of one network read, called by the loop of
 * {@link streamedParts}: as separate stream stages each would cost a channel step per read, and a token
 * stream brings one event per read (see bench/README.md). A read gives at most one text delta and one
 * reasoning delta, whatever the number of tokens in it.
 *
 * After `[DONE]` the events are ignored but the body is still read to its end, so that the connection
 * goes back to the pool instead of being torn down.
 */
const answerStages = (context: StreamContext) => {
  const cap = byteCap(context)
  const decoder = new TextDecoder()
  const splitter = makeSseSplitter({ maxEventChars: context.maxBytes })
  const text = context.streamRedact()
  const reasoning = context.streamRedact()
  const answer: Answer = {
    servedBy: undefined,
    finishReason: undefined,
    usage: undefined,
    annotations: [],
    hasText: false,
    failure: undefined,
    done: false
  }

  /** A read's text as parts, each cleaned of the key. */
  const deltas = (content: string, thought: string): Array<ModelPart> => {
    const parts: Array<ModelPart> = []
    const r = thought === "" ? "" : reasoning.push(thought)
    if (r !== "") parts.push({ _tag: "ReasoningDelta", text: r })
    if (!answer.hasText && content.trim() !== "") answer.hasText = true
    const t = content === "" ? "" : text.push(content)
    if (t !== "") parts.push({ _tag: "TextDelta", text: t })
    return parts
  }

  /** Folds the events into the answer; returns the parts they carried (up to a failure, which ends the answer). */
  const fold = (events: ReadonlyArray<SseEvent> | undefined): Array<ModelPart> => {
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
        answer.failure = new InvalidResponse({
          model: context.model,
          message: `Invalid stream chunk: ${snippet(context.redact(event.data))}`,
          httpStatus: context.status
        })
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
    return content === "" && thought === "" ? [] : deltas(content, thought)
  }

  /** The body has ended: what the splitter and the redactors held back, then the last parts (or the failure). */
  const end = (): Array<ModelPart> => {
    const parts: Array<ModelPart> = []
    if (answer.failure === undefined && !answer.done) {
      const rest = splitter.push(decoder.decode())
      const last = splitter.end()
      parts.push(...fold(rest === undefined || last === undefined ? undefined : [...rest, ...last]))
    }
    const held = text.end()
    if (held !== "") parts.push({ _tag: "TextDelta", text: held })
    if (answer.failure !== undefined) return parts
    if (!answer.hasText) {
      answer.failure = new InvalidResponse({
        model: context.model,
        message: "Invalid response: the stream carried no content",
        httpStatus: context.status
      })
      return parts
    }
    return parts.concat(lastParts({
      servedBy: answer.servedBy !== undefined ? context.redact(answer.servedBy) : context.model,
      usage: usageOf(answer.usage),
      finishReason: answer.finishReason,
      citations: citationsOf(answer.annotations, context.redact)
    }))
  }

  return {
    answer,
    /** One network read (or the few that arrived together): its parts. */
    read: (reads: Chunk.Chunk<Uint8Array>): Array<ModelPart> => {
      let decoded = ""
      for (const bytes of reads) {
        const failure = cap(bytes)
        if (failure !== undefined) {
          const before = fold(splitter.push(decoded))
          answer.failure = failure
          return before
        }
        decoded += decoder.decode(bytes, { stream: true })
      }
      return fold(splitter.push(decoded))
    },
    end
  }
}

/** The end of the body, when the rest after `[DONE]` takes too long: the same as its end. */
const bodyEnd = Either.left(undefined)

/** The read after `[DONE]`, bounded: past {@link DRAIN_AFTER_DONE} it counts as the body's end. */
const drainRead = <A, E>(read: Effect.Effect<Either.Either<A, unknown>, E>): Effect.Effect<Either.Either<A, unknown>, E> =>
  Effect.timeoutTo(read, { duration: DRAIN_AFTER_DONE, onTimeout: () => bodyEnd, onSuccess: identity })

type Parts = Channel.Channel<Chunk.Chunk<ModelPart>, unknown, ProviderError, unknown, void, unknown>

/**
 * The channel that turns the body's reads into parts: one loop over the body's pull, a chunk of parts
 * written per read. A failure ends it after the parts before it. After `[DONE]` the rest of the body
 * gets a moment to end, no more, so a server that keeps the response open cannot hold the call; only
 * that last read is timed: the everyday read races nothing. The two steps are built once, so a read
 * allocates no channel of the loop's own beyond its write.
 */
const partsLoop = (
  context: StreamContext,
  pull: Effect.Effect<Either.Either<Chunk.Chunk<Uint8Array>, unknown>, HttpClientError.ResponseError>
): Parts => {
  const stages = answerStages(context)
  const answer = stages.answer
  const emit = (parts: Array<ModelPart>, next: Parts): Parts =>
    parts.length === 0 ? next : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(parts)), next)
  const close = (parts: Array<ModelPart>): Parts => {
    const last = stages.end()
    const all = parts.length === 0 ? last : parts.concat(last)
    return emit(all, answer.failure === undefined ? Channel.void : Channel.fail(answer.failure))
  }
  const handlers = {
    onFailure: (error: HttpClientError.ResponseError): Parts => {
      answer.failure = transportError(context.model, error)
      return close([])
    },
    onSuccess: (read: Either.Either<Chunk.Chunk<Uint8Array>, unknown>): Parts => {
      if (Either.isLeft(read)) return close([])
      const parts = stages.read(read.right)
      if (answer.failure !== undefined) return close(parts)
      return emit(parts, answer.done ? drainStep : readStep)
    }
  }
  const readStep: Parts = Channel.unwrap(Effect.match(pull, handlers))
  const drainStep: Parts = Channel.unwrap(Effect.match(drainRead(pull), handlers))
  return readStep
}

/**
 * A streamed answer as parts: bytes → capped bytes → text → SSE events → decoded chunks → parts, read
 * by read (see {@link answerStages}). The body is pulled through its own channel in a scope that the
 * parts' channel closes when it ends: no concatenation of channels between a read and its parts.
 */
export const streamedParts = (
  context: StreamContext,
  bytes: Stream.Stream<Uint8Array, HttpClientError.ResponseError>
): Stream.Stream<ModelPart, ProviderError> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Scope.make(), (scope) =>
    Channel.ensuringWith(
      Channel.unwrap(Effect.map(Channel.toPullIn(Stream.toChannel(bytes), scope), (pull) => partsLoop(context, pull))),
      (exit) => Scope.close(scope, exit)
    ))))
