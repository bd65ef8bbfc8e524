import { Array as Arr, Chunk, Effect, Random, Ref, Schema } from "effect"
import { plural } from "../../domain/format.js"
import { CandidateRecord } from "../../domain/manifest.js"
import { slugOf } from "../../domain/model.js"
import { RunStore } from "../../services/runStore.js"
import { Settings } from "../../services/settings.js"
import { labelFor } from "../buildSynthesisPrompt.js"
import type { StartedRun } from "../run/started.js"
import { cancelledCall, panelMessage, questionOf, stepCall, updateStrategy } from "./panel.js"
import { type Answered, plain, sameList, type Strategy, strategyRecord } from "./strategy.js"

/** `refine`'s record: each round after the first (the candidates), with every refined answer (`rounds/N/NN-<slug>.md`). */
export const RefineRecord = strategyRecord("refine", "more rounds", {
  rounds: Schema.optional(Schema.Array(Schema.Struct({ round: Schema.Number, answers: Schema.Array(CandidateRecord) })))
})

export const REFINE_INSTRUCTIONS = `You are one model of a panel of AI models. Several models answered the user's prompt \
independently; their answers are below, labelled anonymously (Candidate A, Candidate B, …) in random order.

Write your own best answer to the user's prompt: keep what is correct and useful in the candidates, fix their mistakes, \
check the reasoning, code and facts yourself, and leave out what is wrong or unsupported.

Answer the user directly, in Markdown, as if you were answering alone. Do not mention the candidates, the panel or this process.`

/** A refined answer on disk: `rounds/R/NN-<slug>.md`, round 1 being the candidates' (`responses/`). */
const roundFile = (round: number, index: number, model: string) =>
  `rounds/${round}/${String(index + 1).padStart(2, "0")}-${slugOf(model)}.md`

/**
 * The `refine` step (a mixture-of-agents layer per round): each refining model sees every answer of the
 * round before, anonymised, and writes an improved one. Returns the last round's answers; a round in
 * which no model answered ends the refinement, and the round before it is synthesized.
 */
export const refineAnswers = Effect.fnUntraced(function*(
  started: StartedRun,
  answered: Arr.NonEmptyReadonlyArray<Answered>
) {
  const { emit, plan, run, writes } = started
  const settings = yield* Settings
  const store = yield* RunStore
  const total = plan.steps.models.length
  const question = questionOf(started, settings.synthesisMaxChars)
  let current = answered
  yield* updateStrategy(started, RefineRecord, (r) => ({ ...r, rounds: [] }))
  for (let round = 2; round <= plan.steps.rounds + 1; round++) {
    const shown = Chunk.toReadonlyArray(yield* Random.shuffle(current)).map((a, i) => ({ label: labelFor(i), content: a.content }))
    const messages = [
      { role: "system", content: REFINE_INSTRUCTIONS },
      { role: "user", content: panelMessage(started, question, shown, settings.synthesisMaxChars, REFINE_INSTRUCTIONS.length) }
    ] as const
    const records = yield* Ref.make(new Map<number, CandidateRecord>())
    const record = (index: number, answer: CandidateRecord) =>
      Ref.updateAndGet(records, (all) => new Map(all).set(index, answer)).pipe(
        Effect.tap((all) =>
          updateStrategy(started, RefineRecord, (r) => ({
            ...r,
            rounds: [
              ...(r.rounds ?? []).filter((x) => x.round !== round),
              { round, answers: [...all].sort(([a], [b]) => a - b).map(([, c]) => c) }
            ]
          }))
        ),
        Effect.flatMap((all) => emit({ _tag: "StrategyStep", message: `refining, round ${round}: ${all.size}/${total} answered` }))
      )
    yield* emit({ _tag: "StrategyStep", message: `refining, round ${round}: asking ${total} model${total === 1 ? "" : "s"}` })

    const refine = (model: string, index: number) =>
      Effect.gen(function*() {
        const call = yield* stepCall(started, `round ${round}`, model, messages)
        const file = roundFile(round, index, model)
        if (call.content !== undefined) yield* writes.save(store.writeStepFile(run, file, call.content))
        const answer: CandidateRecord = { ...call.record, ...(call.content !== undefined ? { file } : {}) }
        yield* record(index, answer)
        return call.content === undefined ? [] : [{ index, model, record: answer, content: call.content }]
      }).pipe(Effect.onInterrupt(() => record(index, cancelledCall(model))))

    const next = (yield* Effect.forEach(plan.steps.models, refine, { concurrency: settings.concurrency })).flat()
    if (!Arr.isNonEmptyReadonlyArray(next)) {
      yield* Effect.logWarning(`refining, round ${round}: no model answered; the answers of round ${round - 1} are synthesized`)
      yield* updateStrategy(
        started,
        RefineRecord,
        (r) => {
          const why = `round ${round}: no model answered; round ${round - 1} was synthesized`
          return { ...r, note: why, degraded: why }
        }
      )
      break
    }
    current = next
  }
  return current
})

/** `refine`: `rounds` more rounds in which the panel (the candidates' models) improves on every answer of the round before. */
export const refine: Strategy<typeof RefineRecord.Type, typeof RefineRecord.Encoded> = {
  ...plain,
  name: "refine",
  Record: RefineRecord,
  plan: ({ models, panel, settings }) => ({ candidates: models, steps: { models: panel ?? models, rounds: settings.rounds } }),
  stepInstructionChars: REFINE_INSTRUCTIONS.length,
  record: () => ({ name: "refine" }),
  aggregate: (started, answered) => Effect.map(refineAnswers(started, answered), (answers) => ({ answers, ranking: undefined })),
  fingerprint: (plan) => ({ refiners: plan.steps.models, rounds: plan.steps.rounds }),
  fits: (record, plan) =>
    record.rounds?.length === plan.steps.rounds &&
    record.rounds.every((round) => sameList(round.answers.map((a) => a.model), plan.steps.models)),
  calls: (record) => (record.rounds ?? []).flatMap((round) => round.answers),
  stepUnit: "refinement rounds answered",
  steps: ({ rounds = [] }) => {
    const answered = rounds.filter((r) => r.answers.some((a) => a.status === "ok")).length
    return { done: answered, of: rounds.length, text: `${answered}/${plural(rounds.length, "more round")} answered` }
  }
}
