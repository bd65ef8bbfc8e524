import { Cause, type Clock, Deferred, Duration, Effect, Either, LogLevel, type Scope } from "effect"
import type { StoreError } from "../../domain/errors.js"
import { describeCall, formatSeconds } from "../../domain/format.js"
import type { CandidateRecord } from "../../domain/manifest.js"
import { responseFileName } from "../../domain/model.js"
import { logsAt } from "../../services/logging.js"
import { type RunHandle, RunStore } from "../../services/runStore.js"
import { Settings } from "../../services/settings.js"
import { type StreamedText, streamedText, textSoFar } from "../answerFold.js"
import { callModel, type ModelCall } from "../callModel.js"
import { spanEvent } from "../callSpan.js"
import type { CandidateCall } from "./callPlan.js"
import { answeredRecord, citationsField, failedRecord, spentField } from "./records.js"

export interface CandidateOutcome {
  readonly index: number
  readonly model: string
  readonly record: CandidateRecord
  /** The answer, when there is one (its file is being written: see `FanOutInput.save`). */
  readonly content: string | undefined
}

/** How a call was cut short: why, after how many attempts, and the text it had streamed. */
interface Cut {
  readonly reason: string
  readonly attempts: number
  readonly startedAt: number
  readonly partial: string | undefined
}

/** How a call ended: it returned, or the policy stopped waiting for it. */
type Ended = ModelCall | { readonly stoppedBy: StopReason }

/** Why the policy stopped waiting for the stragglers. */
export type StopReason = "deadline" | "quorum"

export interface FanOutPolicy {
  /** Clock time (ms) at which the fan-out stops, whatever is still running. */
  readonly cutoffAt: number | undefined
  /** Once this many candidates answered, wait at most `graceMs` more. */
  readonly quorum: number | undefined
  readonly graceMs: number
}

export interface FanOutInput {
  readonly run: RunHandle
  readonly models: ReadonlyArray<string>
  /** The request model `index` is sent (see callPlan.ts). */
  readonly callFor: (model: string, index: number) => CandidateCall
  readonly policy: FanOutPolicy
  readonly onAttempt: (index: number, attempt: number) => Effect.Effect<void>
  /** A piece of a streamed answer arrived (none when nobody listens: see RunRequest's `deltas`). */
  readonly onDelta?: ((index: number, text: string) => Effect.Effect<void>) | undefined
  readonly onFinished: (outcome: CandidateOutcome) => Effect.Effect<void>
  /** The run was interrupted while this call was going: its record (nothing is reported any more). */
  readonly onInterrupted: (outcome: CandidateOutcome) => Effect.Effect<void>
  /**
   * Starts writing a file of the run without waiting for it: an answer goes to disk beside the other
   * calls and the synthesis, not in their way. The caller waits for every write before the manifest.
   */
  readonly save: (write: Effect.Effect<string, StoreError>) => Effect.Effect<void>
}

/** Where a fan-out with a policy (a deadline, a quorum) keeps its stop. */
interface Stopping {
  readonly stop: Deferred.Deferred<StopReason>
  readonly scope: Scope.Scope
}

/** One fan-out: what every candidate reads, and the one count they share. */
interface FanOutState {
  readonly input: FanOutInput
  readonly store: RunStore
  readonly retryPolicy: { readonly retries: number; readonly retryBaseDelayMs: number; readonly timeoutMs: number }
  /**
   * The policy's stop, and the scope its timers live in, when there is a policy: only a deadline or a quorum can stop
   * a call early, and without either there is no race (two fibers per call saved), no scope and no stop.
   */
  readonly stopping: Stopping | undefined
  /** Asked once: when info lines are dropped, they are not built (`describeCall` formats figures). */
  readonly info: boolean
  /** Read in plain code where a candidate starts, rather than as an effect of its own. */
  readonly clock: Clock.Clock
  /** Candidates answered so far: touched only by this fan-out's fibers, in plain code between their effects. */
  answered: number
}

/** One candidate's call as it goes: its attempts, and the text its fold is streaming (answerFold.ts). */
interface Candidate {
  readonly index: number
  readonly model: string
  readonly startedAt: number
  attempts: number
  readonly streamed: StreamedText
}

/** How the call was cut short, if it is: why, and the text streamed by its last attempt. */
const cutOf = (candidate: Candidate, reason: string): Cut => ({
  reason,
  attempts: candidate.attempts,
  startedAt: candidate.startedAt,
  partial: textSoFar(candidate.streamed)
})

const stopAfter = (input: FanOutInput, { scope, stop }: Stopping, reason: StopReason, delayMs: number) => {
  const reached = reason === "deadline" ? "deadline reached" : `quorum of ${input.policy.quorum} reached`
  return Effect.sleep(Duration.millis(Math.max(0, delayMs))).pipe(
    Effect.zipRight(Deferred.succeed(stop, reason)),
    Effect.zipRight(Effect.logInfo(`${reached}: no longer waiting for the other candidates`)),
    Effect.zipRight(spanEvent("parallel_llm.cut", { "parallel_llm.reason": reason })),
    Effect.forkIn(scope)
  )
}

/** Text of an answer that broke off, kept as `.partial.md` (it is paid for): the record's field naming it. */
const keepPartial = (fan: FanOutState, candidate: Candidate, partial: string | undefined) =>
  partial === undefined
    ? Effect.succeed({})
    : fan.input.save(fan.store.writeResponse(fan.input.run, candidate.index, candidate.model, partial, "partial")).pipe(
      Effect.as({ partialFile: responseFileName(candidate.index, candidate.model, ".partial.md") })
    )

/** A call cut short by the policy or an interruption: cancelled, with the reason and what it streamed. */
const cutShort = (fan: FanOutState, candidate: Candidate, cut: Cut) =>
  Effect.map(keepPartial(fan, candidate, cut.partial), (partialFile): CandidateOutcome => ({
    index: candidate.index,
    model: candidate.model,
    content: undefined,
    record: {
      model: candidate.model,
      status: "cancelled",
      reason: cut.reason,
      attempts: cut.attempts,
      latencyMs: fan.clock.unsafeCurrentTimeMillis() - cut.startedAt,
      // Cut while streaming, it was billed all the same (callModel added up its attempts).
      ...spentField(candidate.streamed.spent),
      ...partialFile
    }
  }))

/** A call that returned: its answer saved, or its failure with the text its last attempt streamed. */
const recordCall = (fan: FanOutState, candidate: Candidate, call: ModelCall) => {
  const { index, model } = candidate
  return Either.match(call.result, {
    onRight: (completion) =>
      fan.input.save(fan.store.writeResponse(fan.input.run, index, model, completion.content)).pipe(
        Effect.as<CandidateOutcome>({
          index,
          model,
          content: completion.content,
          record: { ...answeredRecord(model, call, completion), file: responseFileName(index, model), ...citationsField(completion) }
        })
      ),
    // A failure after some text (a timeout, an error mid-stream, the size cap) keeps that text.
    onLeft: (error) =>
      Effect.map(keepPartial(fan, candidate, textSoFar(candidate.streamed)), (partialFile): CandidateOutcome => ({
        index,
        model,
        content: undefined,
        record: { ...failedRecord(model, call, error), ...partialFile }
      }))
  })
}

/** What is said of a call that ended, at the level it deserves. */
const logEnded = (fan: FanOutState, model: string, call: ModelCall) =>
  Either.isRight(call.result)
    ? (fan.info ? Effect.logInfo(`${model}: ${describeCall(call)}`) : Effect.void)
    : Effect.logWarning(`${model}: ${describeCall(call)}`)

/** The answer is paid for: saved and reported even if the run is being interrupted (this runs uninterruptibly). */
const finish = (fan: FanOutState, candidate: Candidate, ended: Ended) =>
  Effect.gen(function*() {
    let outcome: CandidateOutcome
    if ("stoppedBy" in ended) {
      outcome = yield* cutShort(fan, candidate, cutOf(candidate, ended.stoppedBy))
      yield* Effect.logWarning(
        `${candidate.model}: cancelled by the ${ended.stoppedBy} policy after ${formatSeconds(outcome.record.latencyMs ?? 0)}`
      )
    } else {
      outcome = yield* recordCall(fan, candidate, ended)
      yield* logEnded(fan, candidate.model, ended)
    }
    if (outcome.record.status === "ok" && ++fan.answered === fan.input.policy.quorum && fan.stopping !== undefined) {
      yield* stopAfter(fan.input, fan.stopping, "quorum", fan.input.policy.graceMs)
    }
    yield* fan.input.onFinished(outcome)
    return outcome
  })

/** One candidate: its call, raced against the policy's stop when there is one, its outcome recorded whatever happens. */
const ask = (fan: FanOutState) => (model: string, index: number) =>
  Effect.suspend(() => {
    const candidate: Candidate = { index, model, startedAt: fan.clock.unsafeCurrentTimeMillis(), attempts: 0, streamed: streamedText() }
    const onDelta = fan.input.onDelta
    const call = callModel(fan.input.callFor(model, index), fan.retryPolicy, {
      role: "candidate",
      streamed: candidate.streamed,
      onDelta: onDelta === undefined ? undefined : (text) => onDelta(index, text),
      onAttempt: (attempt) => {
        candidate.attempts = attempt
        return fan.input.onAttempt(index, attempt)
      }
    })
    const ended = fan.stopping !== undefined
      ? Effect.raceFirst(call, Effect.map(Deferred.await(fan.stopping.stop), (stoppedBy): Ended => ({ stoppedBy })))
      : call
    // One mask for the whole candidate: only the call itself can be interrupted.
    return Effect.uninterruptibleMask((restore) => {
      const asked = Effect.matchCauseEffect(restore(ended), {
        // Ctrl-C or an MCP cancel: what was streamed is paid for, and kept.
        onFailure: (cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.zipRight(
              Effect.flatMap(cutShort(fan, candidate, cutOf(candidate, "interrupted")), fan.input.onInterrupted),
              Effect.failCause(cause)
            )
            : Effect.failCause(cause),
        onSuccess: (ended) => finish(fan, candidate, ended)
      })
      return fan.info ? Effect.zipRight(Effect.logInfo(`${model}: asking`), asked) : asked
    })
  })

/**
 * Asks every candidate model, at most `concurrency` at a time. Each answer starts being written to
 * the run directory as soon as it arrives. Every outcome is kept (no fail-fast), in model order. When the
 * deadline or the quorum policy ends the fan-out, calls still running are interrupted (which aborts
 * their HTTP requests) and recorded as cancelled with the reason, with the text they had streamed.
 */
export const fanOut = Effect.fnUntraced(function*(input: FanOutInput) {
  const settings = yield* Settings
  const store = yield* RunStore
  const info = yield* logsAt(LogLevel.Info)
  const clock = yield* Effect.clock
  const retryPolicy = { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs }
  const all = (stopping: Stopping | undefined) => {
    const fan: FanOutState = { input, store, retryPolicy, stopping, info, clock, answered: 0 }
    return Effect.forEach(input.models, ask(fan), { concurrency: settings.concurrency })
  }
  // The policy's timers live in a scope of the fan-out's own; a fan-out without a policy needs neither it nor a stop.
  if (input.policy.cutoffAt === undefined && input.policy.quorum === undefined) return yield* all(undefined)
  const cutoffAt = input.policy.cutoffAt
  const stop = yield* Deferred.make<StopReason>()
  return yield* Effect.scopedWith((scope) =>
    Effect.zipRight(
      cutoffAt === undefined
        ? Effect.void
        : stopAfter(input, { stop, scope }, "deadline", cutoffAt - clock.unsafeCurrentTimeMillis()),
      all({ stop, scope })
    )
  )
})
