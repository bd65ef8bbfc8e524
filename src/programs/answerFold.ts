import { Channel, type Chunk, Duration, Effect, Either, type Exit, identity, Scope, Stream } from "effect"
import type { ProviderError } from "../domain/errors.js"
import type { CacheOutcome, Completion, CostDetails, ModelPart, TokenUsage } from "../domain/modelCall.js"
import type { Citation } from "../domain/modelOptions.js"

/**
 * The text of the answer a call is streaming, as its fold gathers it: the one place a streamed answer's
 * text lives. Whoever must keep what was streamed when the call is cut (a timeout, the quorum, Ctrl-C:
 * `.partial.md`) holds one and reads it with {@link textSoFar}. Each attempt starts it again.
 */
export interface StreamedText {
  pieces: Array<string>
  /** The usage the current attempt reported, as soon as it came: a failure after it keeps it. */
  usage: TokenUsage | undefined
  /** Reasoning came in the current attempt: the model was at work, so it was billed even with no text. */
  reasoned: boolean
  /** What the attempts that ended without an answer billed (see {@link billedUsage}), added up by callModel. */
  spent: BilledUsage | undefined
}

export const streamedText = (): StreamedText => ({ pieces: [], usage: undefined, reasoned: false, spent: undefined })

/** Token counts a call was billed for; `estimated` when the server said none and they are this side's estimate. */
export type BilledUsage = TokenUsage & { readonly estimated?: boolean }

/** Characters per token of the estimate: the usual rule of thumb for English text with BPE tokenizers. */
const CHARS_PER_TOKEN = 4

/**
 * What an attempt that gave no answer (empty, cut, failed mid-stream, aborted) was billed. The usage the server
 * reported, if it came before the end; else, if the model was at work (text or reasoning streamed), an
 * estimate marked `estimated`: the prompt's characters and the streamed text's, a token per
 * {@link CHARS_PER_TOKEN}. An attempt refused before any of it (an HTTP error) bills nothing.
 */
export const billedUsage = (streamed: StreamedText, promptChars: number): BilledUsage | undefined => {
  if (streamed.usage !== undefined) return streamed.usage
  if (streamed.pieces.length === 0 && !streamed.reasoned) return undefined
  const streamedChars = streamed.pieces.reduce((n, piece) => n + piece.length, 0)
  return {
    promptTokens: Math.ceil(promptChars / CHARS_PER_TOKEN),
    completionTokens: Math.ceil(streamedChars / CHARS_PER_TOKEN),
    estimated: true
  }
}

/** Two sums of a field: `both` when both must report it (else unknown), else of those that report it. */
const sumOf = (x: number | undefined, y: number | undefined, both: boolean): number | undefined =>
  x === undefined || y === undefined ? (both ? undefined : x ?? y) : x + y

/** The upstream costs added up, each like the cost: only when both report it. */
const addCostDetails = (a: CostDetails | undefined, b: CostDetails | undefined): CostDetails | undefined => {
  if (a === undefined || b === undefined) return undefined
  const details: Record<keyof CostDetails, number | undefined> = {
    upstreamInferenceCost: sumOf(a.upstreamInferenceCost, b.upstreamInferenceCost, true),
    upstreamPromptCost: sumOf(a.upstreamPromptCost, b.upstreamPromptCost, true),
    upstreamCompletionCost: sumOf(a.upstreamCompletionCost, b.upstreamCompletionCost, true)
  }
  const known = Object.entries(details).filter(([, v]) => v !== undefined)
  return known.length === 0 ? undefined : Object.fromEntries(known)
}

/**
 * Two bills added up (`a` the answer's, when one answered): estimated if either part is; the cost and each upstream
 * cost only when both report one (else it is unknown); reasoning and cached tokens of those that report them, as the
 * run's totals count them; the source is `a`'s (a call's attempts all go to one provider).
 */
export const addBilled = (a: BilledUsage | undefined, b: BilledUsage | undefined): BilledUsage | undefined => {
  if (a === undefined || b === undefined) return a ?? b
  const cost = sumOf(a.cost, b.cost, true)
  const reasoningTokens = sumOf(a.reasoningTokens, b.reasoningTokens, false)
  const cachedTokens = sumOf(a.cachedTokens, b.cachedTokens, false)
  const costDetails = addCostDetails(a.costDetails, b.costDetails)
  const source = a.source ?? b.source
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    ...(cost !== undefined ? { cost } : {}),
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
    ...(cachedTokens !== undefined ? { cachedTokens } : {}),
    ...(costDetails !== undefined ? { costDetails } : {}),
    ...(a.estimated === true || b.estimated === true ? { estimated: true } : {}),
    ...(source !== undefined ? { source } : {})
  }
}

/** What the current attempt has streamed, if anything. */
export const textSoFar = (streamed: StreamedText): string | undefined => streamed.pieces.length > 0 ? streamed.pieces.join("") : undefined

export interface FoldHooks {
  /** Where the text goes as it arrives (one is made for the call if none is given). */
  readonly streamed?: StreamedText | undefined
  /** Called with each network read's text (live progress): once per chunk of parts, not per token. */
  readonly onDelta?: ((text: string) => Effect.Effect<void>) | undefined
  /**
   * Called as the fold ends however it ends (an answer, a failure, an interruption), before its stream's scope
   * is closed: callModel bills a failed attempt here, in the fold's own exit handler rather than one more
   * `onExit` around it (a mask, a match and a continuation per call).
   */
  readonly onEnd?: ((exit: Exit.Exit<Completion, ProviderError>) => void) | undefined
}

/**
 * How long the rest of a stream may take to end once its `Finish` came. An HTTP provider reads its body
 * to the end there, so that the connection goes back to the pool; a server that keeps the response open
 * cannot hold the call longer than this (the connection is then dropped).
 */
const END_AFTER_FINISH = Duration.millis(500)

/** The stream's end, when it takes too long after `Finish`: the answer is whole all the same. */
const streamEnd = Either.left(undefined)

/** The read after `Finish`, bounded: only that read is timed, the everyday read races nothing. */
const lastRead = <A, E>(read: Effect.Effect<Either.Either<A, unknown>, E>): Effect.Effect<Either.Either<A, unknown>, E> =>
  Effect.timeoutTo(read, { duration: END_AFTER_FINISH, onTimeout: () => streamEnd, onSuccess: identity })

/** What the parts other than text say of the answer, filled in as they come. */
interface Ending {
  finished: boolean
  /** The `Finish` said the stream's end is at hand: read on without a bound. */
  ended: boolean
  servedBy: string
  finishReason: string | undefined
  usage: TokenUsage | undefined
  citations: ReadonlyArray<Citation> | undefined
  cache: CacheOutcome | undefined
}

/** Folds one chunk of parts into the ending (and the usage and reasoning into `streamed`); returns its text. */
const foldChunk = (ending: Ending, streamed: StreamedText, parts: Chunk.Chunk<ModelPart>): string => {
  let text = ""
  for (const part of parts) {
    switch (part._tag) {
      case "TextDelta":
        text += part.text
        break
      case "Usage":
        ending.usage = part.usage
        streamed.usage = part.usage
        break
      case "Citations":
        ending.citations = part.citations
        break
      case "Finish":
        ending.finished = true
        ending.ended = part.ended === true
        ending.servedBy = part.servedBy
        ending.finishReason = part.reason
        ending.cache = part.cache
        break
      // Reasoning is not part of the answer kept: the usage counts its tokens.
      case "ReasoningDelta":
        streamed.reasoned = true
        break
    }
  }
  return text
}

/**
 * The stream's channel, ended only once every finalizer in it has run. Effect's channel executor leaves a
 * channel's outermost finalizers to the close of its pull's scope; behind a continuation they run as the
 * channel ends, so a fold that read to the end has nothing left to close, and skips the close: closing provides
 * the runtime the pull was made with once more (`Channel.toPullIn`), a diff and a patch of every FiberRef of
 * the fiber, ~5 % of a streamed call's CPU (bench/README.md, the ninth session).
 */
const finalizedAtItsEnd = <A, E>(parts: Stream.Stream<A, E>) => Channel.flatMap(Stream.toChannel(parts), () => Channel.void)

/**
 * One attempt's answer: the stream of parts folded once into a {@link Completion}, its text gathered in
 * `hooks.streamed` as it comes (so a failure, a timeout or an interruption leaves it there) and handed to
 * `hooks.onDelta` read by read. Once `Finish` has come the rest of the stream gets {@link END_AFTER_FINISH}
 * to end, unless the `Finish` said its end is at hand (`ended`): a time bound is a race of two fibers.
 * A pull loop over the stream's channel rather than `Stream.runFold…`: those
 * cost a fiber and ~200 more operations per call (see bench/README.md), and a read allocates nothing here
 * but its text. The pull's scope is closed unless the stream was read to its end (see {@link finalizedAtItsEnd}).
 */
export const foldAnswer = (
  model: string,
  parts: Stream.Stream<ModelPart, ProviderError>,
  hooks: FoldHooks = {}
): Effect.Effect<Completion, ProviderError> =>
  Effect.flatMap(Scope.make(), (scope) => {
    let readToItsEnd = false
    const folded = Effect.flatMap(Channel.toPullIn(finalizedAtItsEnd(parts), scope), (pull) => {
      const streamed = hooks.streamed ?? streamedText()
      streamed.pieces = []
      streamed.usage = undefined
      streamed.reasoned = false
      const onDelta = hooks.onDelta
      const ending: Ending = {
        finished: false,
        ended: false,
        servedBy: model,
        finishReason: undefined,
        usage: undefined,
        citations: undefined,
        cache: undefined
      }
      const completion = (): Completion => ({
        content: streamed.pieces.join(""),
        servedBy: ending.servedBy,
        usage: ending.usage,
        finishReason: ending.finishReason,
        ...(ending.citations !== undefined ? { citations: ending.citations } : {}),
        ...(ending.cache !== undefined ? { cache: ending.cache } : {})
      })
      // Built once: a read allocates no effect of the loop's own beyond its progress report.
      const onRead = (read: Either.Either<Chunk.Chunk<ModelPart>, unknown>): Effect.Effect<Completion, ProviderError> => {
        if (Either.isLeft(read)) {
          // The stream's own end, not the bound on the read after `Finish` (which leaves the stream to the close).
          readToItsEnd = read !== streamEnd
          return Effect.sync(completion)
        }
        const text = foldChunk(ending, streamed, read.right)
        const next = ending.finished && !ending.ended ? last : step
        if (text === "") return next
        streamed.pieces.push(text)
        return onDelta === undefined ? next : Effect.zipRight(onDelta(text), next)
      }
      const step: Effect.Effect<Completion, ProviderError> = Effect.flatMap(pull, onRead)
      const last: Effect.Effect<Completion, ProviderError> = Effect.flatMap(lastRead(pull), onRead)
      return step
    })
    const onEnd = hooks.onEnd
    return Effect.onExit(folded, (exit) => {
      onEnd?.(exit)
      return readToItsEnd ? Effect.void : Scope.close(scope, exit)
    })
  })
