import { Effect, Layer, Option, Ref } from "effect"
import type { ProviderError } from "../../src/domain/errors.js"
import { type Completion, type CompletionRequest, type ModelInfo, OpenRouterClient } from "../../src/services/OpenRouterClient.js"

/** What one attempt of a scripted model does: answer, fail, or take its time doing either. */
export type Step =
  | { readonly answer: string; readonly delayMs?: number; readonly cost?: number }
  | { readonly fail: ProviderError; readonly delayMs?: number }
  | { readonly hang: true }
  /** Streams these pieces, then hangs: a call that a policy, a timeout or Ctrl-C will cut. */
  | { readonly streamThenHang: ReadonlyArray<string> }

export interface ScriptedClient {
  readonly layer: Layer.Layer<OpenRouterClient>
  /** Every request, in the order the calls started. */
  readonly requests: Ref.Ref<ReadonlyArray<CompletionRequest>>
  /** Calls in flight now. */
  readonly inFlight: Ref.Ref<number>
  /** Most calls that were in flight at the same time. */
  readonly maxInFlight: Ref.Ref<number>
}

/**
 * A test double of the OpenRouter client: each model follows its list of steps, one per attempt
 * (the last repeats). Delays use Effect's clock, so TestClock drives them.
 */
export const makeScriptedClient = (
  script: Readonly<Record<string, ReadonlyArray<Step>>>,
  fallback: Step = { answer: "default answer" },
  catalogue: ReadonlyArray<ModelInfo> = []
): Effect.Effect<ScriptedClient> =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<CompletionRequest>>([])
    const attempts = yield* Ref.make<Readonly<Record<string, number>>>({})
    const inFlight = yield* Ref.make(0)
    const maxInFlight = yield* Ref.make(0)

    const complete = (request: CompletionRequest): Effect.Effect<Completion, ProviderError> =>
      Effect.gen(function*() {
        yield* Ref.update(requests, (list) => [...list, request])
        const n = yield* Ref.modify(attempts, (m) => {
          const next = (m[request.model] ?? 0) + 1
          return [next, { ...m, [request.model]: next }] as const
        })
        const steps = script[request.model] ?? [fallback]
        const step = steps[Math.min(n, steps.length) - 1] ?? fallback
        const now = yield* Ref.updateAndGet(inFlight, (k) => k + 1)
        yield* Ref.update(maxInFlight, (m) => Math.max(m, now))
        return yield* Effect.gen(function*() {
          if ("hang" in step) return yield* Effect.never
          if ("streamThenHang" in step) {
            for (const piece of step.streamThenHang) if (request.onDelta) yield* request.onDelta(piece)
            return yield* Effect.never
          }
          if (step.delayMs) yield* Effect.sleep(step.delayMs)
          if ("fail" in step) return yield* Effect.fail(step.fail)
          return {
            content: step.answer,
            servedBy: request.model,
            usage: { promptTokens: 10, completionTokens: 20, ...(step.cost !== undefined ? { cost: step.cost } : {}) },
            finishReason: "stop"
          } satisfies Completion
        }).pipe(Effect.ensuring(Ref.update(inFlight, (k) => k - 1)))
      })

    return {
      layer: Layer.succeed(
        OpenRouterClient,
        OpenRouterClient.make({
          complete,
          listModels: () => Effect.succeed(catalogue),
          catalogue: Effect.succeed(catalogue),
          catalogueNewerThan: () => Effect.succeed(catalogue),
          keptCatalogue: Effect.succeed(Option.none())
        })
      ),
      requests,
      inFlight,
      maxInFlight
    }
  })
