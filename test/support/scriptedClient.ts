import { Chunk, Effect, Layer, Ref, Stream } from "effect"
import type { ProviderError } from "../../src/domain/errors.js"
import type { ModelInfo, ModelPart, ModelRequest } from "../../src/domain/modelCall.js"
import { ModelClient } from "../../src/services/modelClient.js"

/** What one attempt of a scripted model does: answer, fail, or take its time doing either. */
export type Step =
  | { readonly answer: string; readonly delayMs?: number; readonly cost?: number }
  | { readonly fail: ProviderError; readonly delayMs?: number }
  | { readonly hang: true }
  /** Streams these pieces, then hangs: a call that a policy, a timeout or Ctrl-C will cut. */
  | { readonly streamThenHang: ReadonlyArray<string> }
  /** Streams these pieces (one chunk of parts each, as network reads), then fails: an answer that broke off. */
  | { readonly streamThenFail: ReadonlyArray<string>; readonly fail: ProviderError }

export interface ScriptedClient {
  readonly layer: Layer.Layer<ModelClient>
  /** Every request, in the order the calls started. */
  readonly requests: Ref.Ref<ReadonlyArray<ModelRequest>>
  /** Calls in flight now. */
  readonly inFlight: Ref.Ref<number>
  /** Most calls that were in flight at the same time. */
  readonly maxInFlight: Ref.Ref<number>
}

const pieces = (texts: ReadonlyArray<string>): Stream.Stream<ModelPart> =>
  Stream.fromChunks(...texts.map((text) => Chunk.of<ModelPart>({ _tag: "TextDelta", text })))

/** A whole answer as a provider streams it: its text, usage, then how it finished. */
const answerParts = (model: string, step: { readonly answer: string; readonly cost?: number }): Stream.Stream<ModelPart> =>
  Stream.fromIterable<ModelPart>([
    { _tag: "TextDelta", text: step.answer },
    { _tag: "Usage", usage: { promptTokens: 10, completionTokens: 20, ...(step.cost !== undefined ? { cost: step.cost } : {}) } },
    { _tag: "Finish", reason: "stop", servedBy: model }
  ])

/** One attempt's stream of parts, as the step says. */
const partsOf = (model: string, step: Step): Stream.Stream<ModelPart, ProviderError> => {
  if ("hang" in step) return Stream.never
  if ("streamThenHang" in step) return Stream.concat(pieces(step.streamThenHang), Stream.never)
  if ("streamThenFail" in step) return Stream.concat(pieces(step.streamThenFail), Stream.fail(step.fail))
  const delay = step.delayMs ? Stream.drain(Stream.fromEffect(Effect.sleep(step.delayMs))) : Stream.empty
  return Stream.concat(delay, "fail" in step ? Stream.fail(step.fail) : answerParts(model, step))
}

/**
 * A test double of the model client (a scripted `ModelClient` provider): each model follows its list of
 * steps, one per attempt (the last repeats), each a stream of parts. Delays use Effect's clock, so
 * TestClock drives them.
 */
export const makeScriptedClient = (
  script: Readonly<Record<string, ReadonlyArray<Step>>>,
  fallback: Step = { answer: "default answer" },
  catalogue: ReadonlyArray<ModelInfo> = []
): Effect.Effect<ScriptedClient> =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<ModelRequest>>([])
    const attempts = yield* Ref.make<Readonly<Record<string, number>>>({})
    const inFlight = yield* Ref.make(0)
    const maxInFlight = yield* Ref.make(0)

    const stream = (request: ModelRequest): Stream.Stream<ModelPart, ProviderError> =>
      Stream.unwrap(Effect.gen(function*() {
        yield* Ref.update(requests, (list) => [...list, request])
        const n = yield* Ref.modify(attempts, (m) => {
          const next = (m[request.model] ?? 0) + 1
          return [next, { ...m, [request.model]: next }] as const
        })
        const steps = script[request.model] ?? [fallback]
        const step = steps[Math.min(n, steps.length) - 1] ?? fallback
        const now = yield* Ref.updateAndGet(inFlight, (k) => k + 1)
        yield* Ref.update(maxInFlight, (m) => Math.max(m, now))
        return partsOf(request.model, step).pipe(Stream.ensuring(Ref.update(inFlight, (k) => k - 1)))
      }))

    return {
      layer: ModelClient.Test({ stream, listModels: () => Effect.succeed(catalogue) }),
      requests,
      inFlight,
      maxInFlight
    }
  })
