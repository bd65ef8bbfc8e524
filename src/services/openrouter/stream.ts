import type { HttpClientError } from "@effect/platform"
import { Chunk, Duration, Effect, Either, Option, Stream } from "effect"
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

/** What one network read of an SSE answer adds: its text, and what the chunks said about the answer. */
interface Part {
  readonly text: string
  readonly servedBy?: string | undefined
  readonly finishReason?: string | undefined
  readonly usage?: Usage | undefined
  /** The deltas' annotations (web citations), read when the answer ends. */
  readonly annotations?: ReadonlyArray<unknown> | undefined
  /** An error event, or a chunk that is not one: the answer ends here, with the text before it. */
  readonly failure?: ProviderError | undefined
  /** `[DONE]` came: what follows is only the end of the body. */
  readonly done: boolean
}

interface Answer {
  readonly content: string
  readonly servedBy: string | undefined
  readonly finishReason: string | undefined
  readonly usage: Usage | undefined
  readonly annotations: ReadonlyArray<unknown>
  readonly failure: ProviderError | undefined
  readonly done: boolean
}

const emptyAnswer: Answer = {
  content: "",
  servedBy: undefined,
  finishReason: undefined,
  usage: undefined,
  annotations: [],
  failure: undefined,
  done: false
}

/**
 * The stages of a streamed answer — the byte cap, bytes to text, text to SSE events, events to decoded
 * chunks, chunks to one part of the answer — as plain functions of one network read, called by the pull
 * loop of {@link foldBody}: as separate stream stages each would cost a channel step per read, and a
 * token stream brings one event per read (see README, Performance).
 *
 * After `[DONE]` the events are ignored but the body is still read to its end, so that the connection
 * goes back to the pool instead of being torn down.
 */
const answerStages = (context: StreamContext) => {
  const cap = byteCap(context)
  const text = new TextDecoder()
  const splitter = makeSseSplitter({ maxEventChars: context.maxBytes })
  let finished = false

  const eventsToPart = (events: ReadonlyArray<SseEvent> | undefined): Part => {
    if (events === undefined) return { text: "", failure: tooLarge(context.model, context.maxBytes), done: false }
    let content = ""
    let servedBy: string | undefined
    let finishReason: string | undefined
    let usage: Usage | undefined
    let annotations: Array<unknown> | undefined
    const partial = (failure: ProviderError): Part => ({ text: content, servedBy, finishReason, usage, failure, done: false })
    for (const event of events) {
      if (finished) break
      if (event.data === "[DONE]" || event.data.trim() === "[DONE]") {
        finished = true
        break
      }
      const decoded = decodeStreamChunk(event.data)
      if (Either.isLeft(decoded)) {
        return partial(
          new InvalidResponse({
            model: context.model,
            message: `Invalid stream chunk: ${snippet(context.redact(event.data))}`,
            httpStatus: context.status
          })
        )
      }
      const chunk = decoded.right
      const choice = chunk.choices?.[0]
      const error = chunk.error ?? choice?.error
      if (error || choice?.finish_reason === "error") {
        return partial(providerErrorOf(context.model, error, "mid-stream", context.redact, { transientWithoutCode: true }))
      }
      if (chunk.model) servedBy = chunk.model
      if (choice?.finish_reason) finishReason = choice.finish_reason
      if (chunk.usage) usage = chunk.usage
      const delta = choice?.delta?.content
      if (delta) content += delta
      const cited = annotationList(choice?.delta?.annotations)
      if (cited.length > 0) (annotations ??= []).push(...cited)
    }
    return { text: content, servedBy, finishReason, usage, annotations, done: finished }
  }

  return {
    /** One network read (or the few that arrived together) → one part. */
    read: (reads: Chunk.Chunk<Uint8Array>): Part => {
      let decoded = ""
      for (const bytes of reads) {
        const failure = cap(bytes)
        if (failure !== undefined) return { ...eventsToPart(splitter.push(decoded)), failure }
        decoded += text.decode(bytes, { stream: true })
      }
      return eventsToPart(splitter.push(decoded))
    },
    /** The end of the body: text held back for a line end that never came. */
    end: (): Part => {
      const rest = splitter.push(text.decode())
      const last = splitter.end()
      return eventsToPart(rest === undefined || last === undefined ? undefined : [...rest, ...last])
    }
  }
}

const addPart = (answer: Answer, part: Part): Answer => ({
  content: part.text === "" ? answer.content : answer.content + part.text,
  servedBy: part.servedBy ?? answer.servedBy,
  finishReason: part.finishReason ?? answer.finishReason,
  usage: part.usage ?? answer.usage,
  annotations: part.annotations === undefined ? answer.annotations : [...answer.annotations, ...part.annotations],
  failure: part.failure,
  done: answer.done || part.done
})

/**
 * Pulls the body read by read and folds each read's part into the answer (see {@link answerStages}),
 * handing its text to `onDelta` on the way. A failure ends it (keeping the text before it); after
 * `[DONE]` the rest of the body gets a moment to end, no more, so a server that keeps the response open
 * cannot hold the call. Only that last read is timed: the everyday call races nothing. One loop over
 * the pull rather than stream stages: each stage costs a channel step per read.
 */
const foldBody = (
  context: StreamContext,
  bytes: Stream.Stream<Uint8Array, HttpClientError.ResponseError>,
  onDelta: ((text: string) => Effect.Effect<void>) | undefined
): Effect.Effect<Answer> =>
  Effect.scoped(Effect.flatMap(Stream.toPull(bytes), (pull) => {
    const stages = answerStages(context)
    const drain = Effect.timeoutFail(pull, { duration: DRAIN_AFTER_DONE, onTimeout: () => Option.none<HttpClientError.ResponseError>() })
    const next = (answer: Answer, part: Part, more: (answer: Answer) => Effect.Effect<Answer>): Effect.Effect<Answer> => {
      const folded = addPart(answer, part)
      const go = folded.failure === undefined ? more(folded) : Effect.succeed(folded)
      return part.text === "" || onDelta === undefined ? go : Effect.zipRight(onDelta(context.redact(part.text)), go)
    }
    const loop = (answer: Answer): Effect.Effect<Answer> =>
      Effect.matchEffect(answer.done ? drain : pull, {
        onFailure: (end) =>
          Option.isSome(end)
            ? Effect.succeed({ ...answer, failure: transportError(context.model, end.value) })
            : next(answer, stages.end(), Effect.succeed),
        onSuccess: (reads) => next(answer, stages.read(reads), loop)
      })
    return loop(emptyAnswer)
  }))

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

/**
 * A streamed answer as a pipeline: bytes → capped bytes → text → SSE events → decoded chunks → one part
 * per network read → one answer. A failure on the way ends the answer, and the text streamed before it
 * is kept.
 */
export const readStreamedAnswer = (
  context: StreamContext,
  bytes: Stream.Stream<Uint8Array, HttpClientError.ResponseError>,
  onDelta: ((text: string) => Effect.Effect<void>) | undefined
): Effect.Effect<Completion, ProviderError> =>
  foldBody(context, bytes, onDelta).pipe(
    Effect.flatMap((answer): Effect.Effect<Completion, ProviderError> => {
      const content = context.redact(answer.content)
      if (answer.failure !== undefined) return Effect.fail(withPartial(context, answer.failure, content))
      if (content.trim() === "") {
        return Effect.fail(
          new InvalidResponse({
            model: context.model,
            message: "Invalid response: the stream carried no content",
            httpStatus: context.status
          })
        )
      }
      return Effect.succeed({
        content,
        servedBy: answer.servedBy !== undefined ? context.redact(answer.servedBy) : context.model,
        usage: usageOf(answer.usage),
        finishReason: answer.finishReason,
        citations: citationsOf(answer.annotations, context.redact)
      })
    })
  )
