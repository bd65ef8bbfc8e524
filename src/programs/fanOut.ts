import { Clock, Deferred, Duration, Effect, Either, Option, Ref } from "effect"
import { httpStatusOf, partialContentOf, type ProviderError, type StoreError } from "../domain/errors.js"
import type { CandidateRecord, ErrorInfo } from "../domain/manifest.js"
import { responseFileName } from "../domain/model.js"
import { stripControl } from "../domain/text.js"
import type { Completion } from "../services/OpenRouterClient.js"
import { type RunHandle, RunStore } from "../services/RunStore.js"
import { Settings } from "../services/Settings.js"
import { callModel, formatSeconds, type ModelCall } from "./callModel.js"

export interface CandidateOutcome {
  readonly index: number
  readonly model: string
  readonly record: CandidateRecord
  /** The answer, when there is one (its file is being written: see `FanOutInput.save`). */
  readonly content: string | undefined
}

export const errorInfo = (error: ProviderError): ErrorInfo => {
  const httpStatus = httpStatusOf(error)
  return { tag: error._tag, message: stripControl(error.message), ...(httpStatus !== undefined ? { httpStatus } : {}) }
}

export const usageOf = (completion: Completion) => ({
  promptTokens: completion.usage.promptTokens,
  completionTokens: completion.usage.completionTokens,
  ...(completion.usage.cost !== undefined ? { cost: completion.usage.cost } : {})
})

/** A human line for a finished call: "answered in 41.2 s (1,234 tokens, $0.0123)". */
export const describeCall = (call: ModelCall): string =>
  Either.match(call.result, {
    onRight: (c) =>
      `answered in ${formatSeconds(call.latencyMs)} (${(c.usage.promptTokens + c.usage.completionTokens).toLocaleString("en-US")} tokens` +
      `${c.usage.cost !== undefined ? `, $${c.usage.cost.toFixed(4)}` : ""}${call.attempts > 1 ? `, ${call.attempts} attempts` : ""})`,
    onLeft: (e) => `failed after ${formatSeconds(call.latencyMs)} and ${call.attempts} attempt${call.attempts === 1 ? "" : "s"}: ${e.message}`
  })

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
  readonly prompt: string
  readonly models: ReadonlyArray<string>
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
export const fanOut = Effect.fn("fanOut")(function*(input: FanOutInput) {
  const settings = yield* Settings
  const store = yield* RunStore
  const retryPolicy = { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs }
  const stop = yield* Deferred.make<StopReason>()
  const answered = yield* Ref.make(0)
  const stoppable = input.policy.cutoffAt !== undefined || input.policy.quorum !== undefined

  const stopAfter = (reason: StopReason, delayMs: number) =>
    Effect.sleep(Duration.millis(Math.max(0, delayMs))).pipe(
      Effect.zipRight(Deferred.succeed(stop, reason)),
      Effect.zipRight(Effect.logInfo(`${reason === "deadline" ? "deadline reached" : `quorum of ${input.policy.quorum} reached`}: no longer waiting for the other candidates`)),
      Effect.forkScoped
    )

  const ask = (model: string, index: number) =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      let attempts = 0
      // The text streamed by the current attempt: kept as `.partial.md` if the call is cut (policy, timeout, Ctrl-C).
      let streamed: Array<string> = []
      const partialSoFar = () => (streamed.length > 0 ? streamed.join("") : undefined)
      yield* Effect.logInfo(`${model}: asking`)
      const call = yield* callModel(
        {
          model,
          messages: [{ role: "user", content: input.prompt }],
          temperature: settings.temperature,
          ...Option.match(settings.maxTokens, { onNone: () => ({}), onSome: (maxTokens) => ({ maxTokens }) }),
          onDelta: (text) => Effect.sync(() => streamed.push(text)).pipe(Effect.zipRight(input.onDelta(index, text)))
        },
        retryPolicy,
        (attempt) =>
          Effect.sync(() => {
            attempts = attempt
            streamed = []
          }).pipe(Effect.zipRight(input.onAttempt(index, attempt)))
      ).pipe(
        Effect.map((call) => ({ _tag: "Done" as const, call })),
        // Only a deadline or a quorum can stop a call early: without either, no race (two fibers per call saved).
        stoppable ? Effect.raceFirst(Deferred.await(stop).pipe(Effect.map((reason) => ({ _tag: "Stopped" as const, reason })))) : (done) => done,
        // Ctrl-C or an MCP cancel: what was streamed is paid for, and kept.
        Effect.onInterrupt(() =>
          Effect.gen(function*() {
            const partial = partialSoFar()
            if (partial !== undefined) yield* input.save(store.writeResponse(input.run, index, model, partial, "partial"))
            yield* input.onInterrupted({
              index,
              model,
              content: undefined,
              record: {
                model,
                status: "cancelled",
                reason: "interrupted",
                attempts,
                latencyMs: (yield* Clock.currentTimeMillis) - startedAt,
                ...(partial !== undefined ? { partialFile: responseFileName(index, model, ".partial.md") } : {})
              }
            })
          })
        )
      )
      // From here on the answer is paid for: save it and report it even if the run is being interrupted.
      return yield* Effect.uninterruptible(Effect.gen(function*() {
        const cutText = call._tag === "Stopped" ? partialSoFar() : undefined
        if (cutText !== undefined) yield* input.save(store.writeResponse(input.run, index, model, cutText, "partial"))
        const outcome: CandidateOutcome = call._tag === "Stopped"
          ? {
            index,
            model,
            content: undefined,
            record: {
              model,
              status: "cancelled",
              reason: call.reason,
              attempts,
              latencyMs: (yield* Clock.currentTimeMillis) - startedAt,
              ...(cutText !== undefined ? { partialFile: responseFileName(index, model, ".partial.md") } : {})
            }
          }
          : yield* recordCall(call.call, index, model, partialSoFar)
        if (call._tag === "Stopped") {
          yield* Effect.logWarning(`${model}: cancelled by the ${call.reason} policy after ${formatSeconds(outcome.record.latencyMs ?? 0)}`)
        } else {
          yield* Either.isRight(call.call.result)
            ? Effect.logInfo(`${model}: ${describeCall(call.call)}`)
            : Effect.logWarning(`${model}: ${describeCall(call.call)}`)
        }
        if (outcome.record.status === "ok") {
          const n = yield* Ref.updateAndGet(answered, (k) => k + 1)
          if (input.policy.quorum !== undefined && n === input.policy.quorum) yield* stopAfter("quorum", input.policy.graceMs)
        }
        yield* input.onFinished(outcome)
        return outcome
      }))
    })

  const recordCall = (call: ModelCall, index: number, model: string, streamedSoFar: () => string | undefined) =>
    Either.match(call.result, {
      onRight: (completion) =>
        input.save(store.writeResponse(input.run, index, model, completion.content)).pipe(
          Effect.as<CandidateOutcome>({
            index,
            model,
            content: completion.content,
            record: {
              model,
              servedBy: stripControl(completion.servedBy),
              status: "ok",
              file: responseFileName(index, model),
              latencyMs: call.latencyMs,
              attempts: call.attempts,
              usage: usageOf(completion),
              ...(completion.finishReason !== undefined ? { finishReason: stripControl(completion.finishReason) } : {})
            }
          })
        ),
      onLeft: (error) =>
        Effect.gen(function*() {
          // A timeout cuts the stream without carrying its text: what was streamed is kept all the same.
          const partial = partialContentOf(error) ?? (error._tag === "Timeout" ? streamedSoFar() : undefined)
          if (partial !== undefined) yield* input.save(store.writeResponse(input.run, index, model, partial, "partial"))
          return {
            index,
            model,
            content: undefined,
            record: {
              model,
              status: error._tag === "Timeout" ? "timeout" : "error",
              latencyMs: call.latencyMs,
              attempts: call.attempts,
              error: errorInfo(error),
              ...(partial !== undefined ? { partialFile: responseFileName(index, model, ".partial.md") } : {})
            }
          } satisfies CandidateOutcome
        })
    })

  return yield* Effect.scoped(Effect.gen(function*() {
    if (input.policy.cutoffAt !== undefined) {
      yield* stopAfter("deadline", input.policy.cutoffAt - (yield* Clock.currentTimeMillis))
    }
    return yield* Effect.forEach(input.models, ask, { concurrency: settings.concurrency })
  }))
})
