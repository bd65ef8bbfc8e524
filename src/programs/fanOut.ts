import { Effect, Either, Option } from "effect"
import { type ProviderError, httpStatusOf } from "../domain/errors.js"
import type { CandidateRecord, ErrorInfo } from "../domain/manifest.js"
import type { Completion } from "../services/OpenRouterClient.js"
import { type RunHandle, RunStore } from "../services/RunStore.js"
import { Settings } from "../services/Settings.js"
import { callModel, formatSeconds, type ModelCall } from "./callModel.js"

export interface CandidateOutcome {
  readonly index: number
  readonly model: string
  readonly record: CandidateRecord
  /** The answer, when there is one (it is already on disk). */
  readonly content: string | undefined
}

export const errorInfo = (error: ProviderError): ErrorInfo => {
  const httpStatus = httpStatusOf(error)
  return { tag: error._tag, message: error.message, ...(httpStatus !== undefined ? { httpStatus } : {}) }
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

export interface FanOutInput {
  readonly run: RunHandle
  readonly prompt: string
  readonly models: ReadonlyArray<string>
  readonly onAttempt: (index: number, attempt: number) => Effect.Effect<void>
  readonly onFinished: (outcome: CandidateOutcome) => Effect.Effect<void>
}

/**
 * Asks every candidate model, at most `concurrency` at a time. Each answer is written to the run
 * directory as soon as it arrives. Every outcome is kept (no fail-fast), in model order.
 */
export const fanOut = Effect.fn("fanOut")(function*(input: FanOutInput) {
  const settings = yield* Settings
  const store = yield* RunStore
  const policy = { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs }

  const ask = (model: string, index: number) =>
    Effect.gen(function*() {
      yield* Effect.logInfo(`${model}: asking`)
      const call = yield* callModel(
        {
          model,
          messages: [{ role: "user", content: input.prompt }],
          temperature: settings.temperature,
          ...Option.match(settings.maxTokens, { onNone: () => ({}), onSome: (maxTokens) => ({ maxTokens }) })
        },
        policy,
        (attempt) => input.onAttempt(index, attempt)
      )
      const outcome: CandidateOutcome = yield* Either.match(call.result, {
        onRight: (completion) =>
          store.writeResponse(input.run, index, model, completion.content).pipe(
            Effect.map((file): CandidateOutcome => ({
              index,
              model,
              content: completion.content,
              record: {
                model,
                servedBy: completion.servedBy,
                status: "ok",
                file,
                latencyMs: call.latencyMs,
                attempts: call.attempts,
                usage: usageOf(completion),
                ...(completion.finishReason !== undefined ? { finishReason: completion.finishReason } : {})
              }
            }))
          ),
        onLeft: (error) =>
          Effect.succeed<CandidateOutcome>({
            index,
            model,
            content: undefined,
            record: {
              model,
              status: error._tag === "Timeout" ? "timeout" : "error",
              latencyMs: call.latencyMs,
              attempts: call.attempts,
              error: errorInfo(error)
            }
          })
      })
      yield* Either.isRight(call.result)
        ? Effect.logInfo(`${model}: ${describeCall(call)}`)
        : Effect.logWarning(`${model}: ${describeCall(call)}`)
      yield* input.onFinished(outcome)
      return outcome
    })

  return yield* Effect.forEach(input.models, ask, { concurrency: settings.concurrency })
})
