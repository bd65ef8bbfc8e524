import { Cause, Clock, Deferred, Duration, Effect, Either, LogLevel } from "effect"
import { partialContentOf, type StoreError } from "../../domain/errors.js"
import { describeCall, formatSeconds } from "../../domain/format.js"
import type { CandidateRecord } from "../../domain/manifest.js"
import { responseFileName } from "../../domain/model.js"
import { logsAt } from "../../services/Logging.js"
import { type RunHandle, RunStore } from "../../services/RunStore.js"
import { Settings } from "../../services/Settings.js"
import { callModel, type ModelCall } from "../callModel.js"
import type { CandidateCall } from "./callPlan.js"
import { answeredRecord, citationsField, failedRecord } from "./records.js"

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
  /** A piece of a streamed answer arrived. */
  readonly onDelta: (index: number, text: string) => Effect.Effect<void>
  readonly onFinished: (outcome: CandidateOutcome) => Effect.Effect<void>
  /** The run was interrupted while this call was going: its record (nothing is reported any more). */
  readonly onInterrupted: (outcome: CandidateOutcome) => Effect.Effect<void>
  /**
   * Starts writing a file of the run without waiting for it: an answer goes to disk beside the other
   * calls and the synthesis, not in their way. The caller waits for every write before the manifest.
   */
  readonly save: (write: Effect.Effect<string, StoreError>) => Effect.Effect<void>
}

/**
 * Asks every candidate model, at most `concurrency` at a time. Each answer starts being written to
 * the run directory as soon as it arrives. Every outcome is kept (no fail-fast), in model order. When the
 * deadline or the quorum policy ends the fan-out, calls still running are interrupted (which aborts
 * their HTTP requests) and recorded as cancelled with the reason.
 */
export const fanOut = Effect.fnUntraced(function*(input: FanOutInput) {
  const settings = yield* Settings
  const store = yield* RunStore
  const retryPolicy = { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs }
  const stop = yield* Deferred.make<StopReason>()
  // Touched only by this fan-out's fibers, in plain code between their effects.
  let answered = 0
  const stoppable = input.policy.cutoffAt !== undefined || input.policy.quorum !== undefined
  // Asked once: when info lines are dropped, they are not built (`describeCall` formats figures).
  const info = yield* logsAt(LogLevel.Info)
  // Read in plain code where a candidate starts, rather than as an effect of its own.
  const clock = yield* Effect.clock

  const stopAfter = (reason: StopReason, delayMs: number) => {
    const reached = reason === "deadline" ? "deadline reached" : `quorum of ${input.policy.quorum} reached`
    return Effect.sleep(Duration.millis(Math.max(0, delayMs))).pipe(
      Effect.zipRight(Deferred.succeed(stop, reason)),
      Effect.zipRight(Effect.logInfo(`${reached}: no longer waiting for the other candidates`)),
      Effect.forkScoped
    )
  }

  /** Text of an answer that broke off, kept as `.partial.md` (it is paid for): the record's field naming it. */
  const keepPartial = (index: number, model: string, partial: string | undefined) =>
    partial === undefined
      ? Effect.succeed({})
      : input.save(store.writeResponse(input.run, index, model, partial, "partial")).pipe(
        Effect.as({ partialFile: responseFileName(index, model, ".partial.md") })
      )

  /** A call cut short by the policy or an interruption: cancelled, with the reason and what it streamed. */
  const cutShort = (index: number, model: string, cut: Cut) =>
    Effect.gen(function*() {
      const partialFile = yield* keepPartial(index, model, cut.partial)
      return {
        index,
        model,
        content: undefined,
        record: {
          model,
          status: "cancelled",
          reason: cut.reason,
          attempts: cut.attempts,
          latencyMs: (yield* Clock.currentTimeMillis) - cut.startedAt,
          ...partialFile
        }
      } satisfies CandidateOutcome
    })

  /** What is said of a call that ended, at the level it deserves. */
  const logEnded = (model: string, call: ModelCall) =>
    Either.isRight(call.result)
      ? (info ? Effect.logInfo(`${model}: ${describeCall(call)}`) : Effect.void)
      : Effect.logWarning(`${model}: ${describeCall(call)}`)

  /** The answer is paid for: saved and reported even if the run is being interrupted (this runs uninterruptibly). */
  const finish = (index: number, model: string, ended: Ended, cut: () => Cut) =>
    Effect.gen(function*() {
      let outcome: CandidateOutcome
      if ("stoppedBy" in ended) {
        outcome = yield* cutShort(index, model, { ...cut(), reason: ended.stoppedBy })
        yield* Effect.logWarning(
          `${model}: cancelled by the ${ended.stoppedBy} policy after ${formatSeconds(outcome.record.latencyMs ?? 0)}`
        )
      } else {
        outcome = yield* recordCall(ended, index, model, () => cut().partial)
        yield* logEnded(model, ended)
      }
      if (outcome.record.status === "ok" && ++answered === input.policy.quorum) yield* stopAfter("quorum", input.policy.graceMs)
      yield* input.onFinished(outcome)
      return outcome
    })

  const ask = (model: string, index: number) =>
    Effect.suspend(() => {
      const startedAt = clock.unsafeCurrentTimeMillis()
      let attempts = 0
      // The text streamed by the current attempt: kept as `.partial.md` if the call is cut (policy, timeout, Ctrl-C).
      let streamed: Array<string> = []
      const cut = (): Cut => ({
        reason: "interrupted",
        attempts,
        startedAt,
        partial: streamed.length > 0 ? streamed.join("") : undefined
      })
      const call = callModel(
        {
          ...input.callFor(model, index),
          // Once per network read: one effect, not a chain of them.
          onDelta: (text) =>
            Effect.suspend(() => {
              streamed.push(text)
              return input.onDelta(index, text)
            })
        },
        retryPolicy,
        (attempt) =>
          Effect.suspend(() => {
            attempts = attempt
            streamed = []
            return input.onAttempt(index, attempt)
          })
      )
      // Only a deadline or a quorum can stop a call early: without either, no race (two fibers per call saved).
      const ended = stoppable
        ? Effect.raceFirst(call, Effect.map(Deferred.await(stop), (stoppedBy): Ended => ({ stoppedBy })))
        : call
      // One mask for the whole candidate: only the call itself can be interrupted.
      return Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(
          info ? Effect.logInfo(`${model}: asking`) : Effect.void,
          Effect.matchCauseEffect(restore(ended), {
            // Ctrl-C or an MCP cancel: what was streamed is paid for, and kept.
            onFailure: (cause) =>
              Cause.isInterruptedOnly(cause)
                ? Effect.zipRight(Effect.flatMap(cutShort(index, model, cut()), input.onInterrupted), Effect.failCause(cause))
                : Effect.failCause(cause),
            onSuccess: (ended) => finish(index, model, ended, cut)
          })
        )
      )
    })

  const recordCall = (call: ModelCall, index: number, model: string, streamedSoFar: () => string | undefined) =>
    Either.match(call.result, {
      onRight: (completion) =>
        input.save(store.writeResponse(input.run, index, model, completion.content)).pipe(
          Effect.as<CandidateOutcome>({
            index,
            model,
            content: completion.content,
            record: { ...answeredRecord(model, call, completion), file: responseFileName(index, model), ...citationsField(completion) }
          })
        ),
      onLeft: (error) =>
        Effect.gen(function*() {
          // A timeout cuts the stream without carrying its text: what was streamed is kept all the same.
          const partialFile = yield* keepPartial(
            index,
            model,
            partialContentOf(error) ?? (error._tag === "Timeout" ? streamedSoFar() : undefined)
          )
          return {
            index,
            model,
            content: undefined,
            record: { ...failedRecord(model, call, error), ...partialFile }
          } satisfies CandidateOutcome
        })
    })

  const all = Effect.forEach(input.models, ask, { concurrency: settings.concurrency })
  // The policy's timers live in a scope of the fan-out's own; a fan-out without a policy needs none.
  if (!stoppable) return yield* all
  return yield* Effect.scoped(Effect.gen(function*() {
    if (input.policy.cutoffAt !== undefined) {
      yield* stopAfter("deadline", input.policy.cutoffAt - (yield* Clock.currentTimeMillis))
    }
    return yield* all
  }))
})
