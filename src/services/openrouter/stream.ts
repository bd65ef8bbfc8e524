import type { HttpClientError } from "@effect/platform"
import { Channel, type Chunk, Duration, Effect, Either, identity, Stream } from "effect"
import { ErrorInBody, InvalidResponse, NetworkError, type ProviderError, RateLimited } from "../../domain/errors.js"
import { makeSseSplitter, type SseEvent } from "../sseEvents.js"
import { byteCap, tooLarge, transportError } from "./body.js"
import { annotationList, citationsOf } from "./citations.js"
import type { Redact } from "./redact.js"
import { type Completion, providerErrorOf, snippet, usageOf } from "./response.js"
import { decodeStreamChunk, type Usage } from "./wire.js"

/** How long the rest of a streamed body may take to end after `[DONE]` before the connection is dropped. */
const DRAIN_AFTER_DONE = Duration.millis(500)

export interface StreamContext {
  readonly model: string
  readonly status: number
  readonly maxBytes: number
  readonly redact: Redact
}

/** The answer as its body's reads build it: one per call, filled in place by the pull loop. */
interface Answer {
  content: string
  servedBy: string | undefined
  finishReason: string | undefined
  usage: Usage | undefined
  annotations: Array<unknown>
  /** An error event, a chunk that is not one, the byte cap or the transport: the answer ends here, with the text before it. */
  failure: ProviderError | undefined
  /** `[DONE]` came: what follows is only the end of the body. */
  done: boolean
}

/**
 * The stages of a streamed answer — the byte cap, bytes to text, text to SSE events, events to decoded
 * chunks, chunks into the answer — as plain functions of one network read, called by the pull loop of
 * {@link readStreamedAnswer}: as separate stream stages each would cost a channel step per read, and a token
 * stream brings one event per read (see README, Performance). Each read returns its text (for
 * `onDelta`) and fills the one answer in place: nothing is allocated per read beyond the text.
 *
 * After `[DONE]` the events are ignored but the body is still read to its end, so that the connection
 * goes back to the pool instead of being torn down.
 */
const answerStages = (context: StreamContext) => {
  const cap = byteCap(context)
  const text = new TextDecoder()
  const splitter = makeSseSplitter({ maxEventChars: context.maxBytes })
  const answer: Answer = {
    content: "",
    servedBy: undefined,
    finishReason: undefined,
    usage: undefined,
    annotations: [],
    failure: undefined,
    done: false
  }

  /** Folds the events into the answer; returns the text they carried (up to a failure, which ends the answer). */
  const fold = (events: ReadonlyArray<SseEvent> | undefined): string => {
    if (events === undefined) {
      answer.failure = tooLarge(context.model, context.maxBytes)
      return ""
    }
    let content = ""
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
      const delta = choice?.delta?.content
      if (delta) content += delta
      const cited = annotationList(choice?.delta?.annotations)
      if (cited.length > 0) answer.annotations.push(...cited)
    }
    if (content !== "") answer.content += content
    return content
  }

  return {
    answer,
    /** One network read (or the few that arrived together): its text. */
    read: (reads: Chunk.Chunk<Uint8Array>): string => {
      let decoded = ""
      for (const bytes of reads) {
        const failure = cap(bytes)
        if (failure !== undefined) {
          const before = fold(splitter.push(decoded))
          answer.failure = failure
          return before
        }
        decoded += text.decode(bytes, { stream: true })
      }
      return fold(splitter.push(decoded))
    },
    /** The end of the body: text held back for a line end that never came. */
    end: (): string => {
      const rest = splitter.push(text.decode())
      const last = splitter.end()
      return fold(rest === undefined || last === undefined ? undefined : [...rest, ...last])
    }
  }
}

/** The end of the body, when the rest after `[DONE]` takes too long: the same as its end. */
const bodyEnd = Either.left(undefined)

/** The read after `[DONE]`, bounded: past {@link DRAIN_AFTER_DONE} it counts as the body's end. */
const drainRead = <A, E>(read: Effect.Effect<Either.Either<A, unknown>, E>): Effect.Effect<Either.Either<A, unknown>, E> =>
  Effect.timeoutTo(read, { duration: DRAIN_AFTER_DONE, onTimeout: () => bodyEnd, onSuccess: identity })

/** A failure keeps the text streamed before it, where its type can carry it. */
const withPartial = (context: StreamContext, error: ProviderError, content: string): ProviderError => {
  if (content === "" || ("partialContent" in error && error.partialContent !== undefined)) return error
  switch (error._tag) {
    case "NetworkError":
      return new NetworkError({ model: error.model, message: error.message, partialContent: content })
    case "ResponseTooLarge":
      return tooLarge(context.model, context.maxBytes, content)
    case "ErrorInBody":
      return new ErrorInBody({
        model: error.model,
        message: error.message,
        code: error.code,
        transient: error.transient,
        partialContent: content
      })
    case "RateLimited":
      return new RateLimited({
        model: error.model,
        message: error.message,
        httpStatus: error.httpStatus,
        retryAfterMs: error.retryAfterMs,
        partialContent: content
      })
    default:
      return error
  }
}

/** The answer once its body has ended: a completion, or its failure with the text streamed before it. */
const completionOf = (context: StreamContext, answer: Answer): Either.Either<Completion, ProviderError> => {
  const content = context.redact(answer.content)
  if (answer.failure !== undefined) return Either.left(withPartial(context, answer.failure, content))
  if (content.trim() === "") {
    return Either.left(
      new InvalidResponse({
        model: context.model,
        message: "Invalid response: the stream carried no content",
        httpStatus: context.status
      })
    )
  }
  return Either.right({
    content,
    servedBy: answer.servedBy !== undefined ? context.redact(answer.servedBy) : context.model,
    usage: usageOf(answer.usage),
    finishReason: answer.finishReason,
    citations: citationsOf(answer.annotations, context.redact)
  })
}

/**
 * A streamed answer: bytes → capped bytes → text → SSE events → decoded chunks → the answer, read by
 * read (see {@link answerStages}), each read's text handed to `onDelta` on the way. A failure ends it,
 * and the text streamed before it is kept. After `[DONE]` the rest of the body gets a moment to end,
 * no more, so a server that keeps the response open cannot hold the call. Only that last read is
 * timed: the everyday call races nothing. One loop over the body's channel rather than stream stages:
 * each stage costs a channel step per read, and the `Stream` pull adds an `Option` per read to what the
 * channel's pull gives.
 */
export const readStreamedAnswer = (
  context: StreamContext,
  bytes: Stream.Stream<Uint8Array, HttpClientError.ResponseError>,
  onDelta: ((text: string) => Effect.Effect<void>) | undefined
): Effect.Effect<Completion, ProviderError> =>
  Effect.scopedWith((scope) =>
    Effect.flatMap(Channel.toPullIn(Stream.toChannel(bytes), scope), (pull) => {
      const stages = answerStages(context)
      const answer = stages.answer
      const drain = drainRead(pull)
      // An Either is an Effect: its Left is the failure.
      const finish = () => completionOf(context, answer)
      const delta = (text: string, then: Effect.Effect<Completion, ProviderError>) =>
        text === "" || onDelta === undefined ? then : Effect.zipRight(onDelta(context.redact(text)), then)
      // The two steps are built once: a read allocates no effect of the loop's own.
      const handlers = {
        onFailure: (error: HttpClientError.ResponseError) => {
          answer.failure = transportError(context.model, error)
          return finish()
        },
        onSuccess: (read: Either.Either<Chunk.Chunk<Uint8Array>, unknown>): Effect.Effect<Completion, ProviderError> => {
          if (Either.isLeft(read)) return delta(stages.end(), finish())
          const text = stages.read(read.right)
          return delta(text, answer.failure !== undefined ? finish() : answer.done ? drainStep : readStep)
        }
      }
      const readStep: Effect.Effect<Completion, ProviderError> = Effect.matchEffect(pull, handlers)
      const drainStep: Effect.Effect<Completion, ProviderError> = Effect.matchEffect(drain, handlers)
      return readStep
    })
  )
