import { Effect, Ref } from "effect"
import { responseFileName } from "../../domain/model.js"
import { RunStore } from "../../services/runStore.js"
import { Settings } from "../../services/settings.js"
import { candidateCall, sentOptions } from "./callPlan.js"
import { type CandidateOutcome, fanOut } from "./fanOut.js"
import { withAttempt, withOutcome } from "./outcome.js"
import type { StartedRun } from "./started.js"

/**
 * Step 2: every candidate's outcome, in model order: asked under the run's policy (deadline, quorum), or,
 * for a re-synthesis, copied from the earlier run. Each is recorded and reported as it finishes.
 */
export const collectCandidates = Effect.fnUntraced(function*(started: StartedRun) {
  const { emit, plan, request, run, state, writes } = started
  const settings = yield* Settings

  /** Records the outcome and reports it with the counts so far (one pass over the records). */
  const onFinished = (outcome: CandidateOutcome) =>
    Effect.flatMap(
      Ref.modify(state, (s) => {
        const next = withOutcome(outcome)(s)
        let finished = 0
        let answered = 0
        for (const c of next.candidates) {
          if (c === undefined) continue
          finished += 1
          if (c.status === "ok") answered += 1
        }
        return [{ finished, answered }, next]
      }),
      ({ answered, finished }) => emit({ _tag: "CandidateFinished", outcome, finished, answered, total: plan.models.length })
    )

  if (request.reuse) {
    const store = yield* RunStore
    return yield* Effect.forEach(request.reuse.outcomes, (outcome) =>
      Effect.gen(function*() {
        if (outcome.content !== undefined) yield* writes.save(store.writeResponse(run, outcome.index, outcome.model, outcome.content))
        const copied: CandidateOutcome = {
          ...outcome,
          record: { ...outcome.record, ...(outcome.content !== undefined ? { file: responseFileName(outcome.index, outcome.model) } : {}) }
        }
        yield* onFinished(copied)
        return copied
      }))
  }
  const input = { prompt: request.prompt, attachments: started.attachments, thread: request.thread }
  const calls = plan.models.map((model) => candidateCall(input, settings, model))
  // Each record says what its model was sent besides the prompt.
  const withOptions = (outcome: CandidateOutcome): CandidateOutcome => {
    const call = calls[outcome.index]
    return call === undefined ? outcome : { ...outcome, record: { ...outcome.record, options: sentOptions(call) } }
  }
  return yield* fanOut({
    run,
    models: plan.models,
    callFor: (model, index) => calls[index] ?? candidateCall(input, settings, model),
    policy: plan.policy,
    onAttempt: (index, attempt) => {
      const counted = Ref.update(state, withAttempt(index, attempt))
      return attempt > 1 ? Effect.zipRight(counted, emit({ _tag: "CandidateRetry", index, attempt })) : counted
    },
    onDelta: request.deltas === false ? undefined : (index, text) => emit({ _tag: "CandidateDelta", index, text }),
    onFinished: (outcome) => onFinished(withOptions(outcome)),
    onInterrupted: (outcome) => Ref.update(state, withOutcome(withOptions(outcome))),
    save: writes.save
  })
})
