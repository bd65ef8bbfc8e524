import { Array as Arr, Chunk, Effect, Either, Option, Random, Ref, Schema } from "effect"
import { CandidateRecord } from "../../domain/manifest.js"
import { slugOf } from "../../domain/model.js"
import { RunStore } from "../../services/runStore.js"
import { Settings } from "../../services/settings.js"
import { labelFor } from "../buildSynthesisPrompt.js"
import type { StartedRun } from "../run/started.js"
import { bordaCount, type BordaScore, parseRanking, RANKING_LINE } from "./borda.js"
import { cancelledCall, panelMessage, questionOf, stepCall, updateStrategy } from "./panel.js"
import { type Aggregated, type Answered, plain, sameList, type Strategy, strategyRecord } from "./strategy.js"

/** A judge: its call, and the ranking read from its answer (or why none could be). */
const JudgeRecord = Schema.Struct({
  ...CandidateRecord.fields,
  /** The labels it ranked, best first, without its own answer's (no self-votes). */
  ranking: Schema.optional(Schema.Array(Schema.String)),
  /** Groups of labels in `ranking` that it ranked level (`C = A`). */
  tied: Schema.optional(Schema.Array(Schema.Array(Schema.String))),
  /** The labels of its own answers, left out of its ranking. */
  ownLabels: Schema.optional(Schema.Array(Schema.String)),
  /** Why its ranking is not counted: it failed, or its answer held no ranking that could be read. */
  unparsed: Schema.optional(Schema.String)
})
type JudgeRecord = typeof JudgeRecord.Type

/** `rank`'s record: the labels the judges saw, each judge, and the Borda aggregate. */
export const RankRecord = strategyRecord("rank", "judges rank them first", {
  /** Which label stood for which answer (its file), as the judges saw them. */
  labels: Schema.optional(
    Schema.Array(Schema.Struct({ label: Schema.String, model: Schema.String, file: Schema.optional(Schema.String) }))
  ),
  judges: Schema.optional(Schema.Array(JudgeRecord)),
  /** Borda score (mean over the rankings that could name the answer, 1 best, 0 worst), best first; the synthesizer saw the answers in this order. */
  aggregate: Schema.optional(Schema.Array(Schema.Struct({ label: Schema.String, model: Schema.String, points: Schema.Number })))
})

export const JUDGE_INSTRUCTIONS = `You are a judge on a panel of AI models. Several models answered the user's prompt \
independently. Their answers are labelled anonymously (Candidate A, Candidate B, …) and shown in random order: the labels \
say nothing about which model wrote them or how good they are.

Rank the answers from best to worst: correctness first (check the reasoning, code and facts yourself), then completeness \
and clarity. Explain your verdict briefly, then end your reply with one line in exactly this form, naming every candidate \
once, best first (write = between two you cannot separate):

${RANKING_LINE} B > A > C`

/** A judge's answer on disk: `rankings/NN-<slug>.md`, NN its place among the judges. */
const judgeFile = (index: number, model: string) => `rankings/${String(index + 1).padStart(2, "0")}-${slugOf(model)}.md`

/** What the synthesizer is told of the ranking; its candidates come in this order, under the judges' labels. */
const rankingText = (scores: ReadonlyArray<BordaScore>, counted: number, judges: number) =>
  [
    `${counted} of ${judges} judge${judges === 1 ? "" : "s"} ranked the candidates (Borda count, normalised: on each ` +
    "ranking the best scores 1 and the worst 0; a candidate's score is its mean over the rankings that could name it, " +
    "and no judge ranked its own answer). The candidates below are shown in this order, best ranked first, under the " +
    "labels the judges saw (so a label still says nothing of quality: the order does). The ranking is " +
    "evidence, not a verdict: still decide on the merits.",
    "",
    ...scores.map((s) => `- Candidate ${s.label}: ${s.points} over ${s.ballots} ranking${s.ballots === 1 ? "" : "s"}, ${s.firsts} first`)
  ].join("\n")

/** An answer as the judges see it: under its label. */
interface Shown {
  readonly label: string
  readonly answer: Answered
}

/** A judge's messages: each judge sees the answers in another order (the labels stay), so no answer is always read first. */
const judgeMessages = (started: StartedRun, shown: ReadonlyArray<Shown>, budgetChars: number) => {
  const question = questionOf(started, budgetChars)
  return (index: number) => {
    const turn = index % shown.length
    const order = [...shown.slice(turn), ...shown.slice(0, turn)].map((s) => ({ label: s.label, content: s.answer.content }))
    return [
      { role: "system", content: JUDGE_INSTRUCTIONS },
      { role: "user", content: panelMessage(started, question, order, budgetChars, JUDGE_INSTRUCTIONS.length) }
    ] as const
  }
}

/** Every judge's call, its answer kept and its ranking read; each recorded in the manifest as it ends. */
const askJudges = Effect.fnUntraced(function*(started: StartedRun, shown: ReadonlyArray<Shown>) {
  const { emit, plan, run, writes } = started
  const settings = yield* Settings
  const store = yield* RunStore
  const labels = shown.map((s) => s.label)
  const messagesFor = judgeMessages(started, shown, settings.synthesisMaxChars)
  const total = plan.steps.models.length
  const records = yield* Ref.make(new Map<number, JudgeRecord>())
  const record = (index: number, judge: JudgeRecord) =>
    Ref.updateAndGet(records, (all) => new Map(all).set(index, judge)).pipe(
      Effect.tap((all) =>
        updateStrategy(started, RankRecord, (r) => ({ ...r, judges: [...all].sort(([a], [b]) => a - b).map(([, j]) => j) }))
      ),
      Effect.flatMap((all) => emit({ _tag: "StrategyStep", message: `ranking: ${all.size}/${total} judges done` }))
    )
  yield* emit({ _tag: "StrategyStep", message: `ranking: asking ${total} judge${total === 1 ? "" : "s"}` })

  const judge = (model: string, index: number) =>
    Effect.gen(function*() {
      const call = yield* stepCall(started, "judge", model, messagesFor(index))
      const own = shown.filter((s) => s.answer.model === model).map((s) => s.label)
      const file = judgeFile(index, model)
      if (call.content !== undefined) yield* writes.save(store.writeStepFile(run, file, call.content))
      const parsed = call.content === undefined
        ? Either.left(`the judge failed: ${call.record.error?.message ?? call.record.status}`)
        : parseRanking(call.content, labels, own)
      if (Either.isLeft(parsed)) yield* Effect.logWarning(`judge ${model}: ranking not counted: ${parsed.left}`)
      const judged: JudgeRecord = {
        ...call.record,
        ...(call.content !== undefined ? { file } : {}),
        ...(own.length > 0 ? { ownLabels: own } : {}),
        ...Either.match(parsed, {
          onLeft: (unparsed) => ({ unparsed }),
          onRight: ({ ranking, tied }) => ({ ranking, ...(tied.length > 0 ? { tied } : {}) })
        })
      }
      yield* record(index, judged)
      return judged
    }).pipe(Effect.onInterrupt(() => record(index, cancelledCall(model))))

  return yield* Effect.forEach(plan.steps.models, judge, { concurrency: settings.concurrency })
})

/**
 * The `rank` step: every judge ranks the anonymised answers; the rankings that can be read are added up
 * (Borda, self-votes excluded). A judge that fails or whose ranking cannot be read is recorded and not
 * counted; it never fails the run. Returns the answers best first, with the text the synthesizer gets.
 */
export const rankAnswers = Effect.fnUntraced(function*(
  started: StartedRun,
  answered: Arr.NonEmptyReadonlyArray<Answered>
) {
  const unranked: Aggregated = { answers: answered, ranking: undefined }
  if (answered.length < 2) {
    const why = "one answer: nothing to rank"
    yield* updateStrategy(started, RankRecord, (r) => ({ ...r, note: why, degraded: why }))
    return unranked
  }
  const shown = Chunk.toReadonlyArray(yield* Random.shuffle(answered)).map((answer, i) => ({ label: labelFor(i), answer }))
  yield* updateStrategy(started, RankRecord, (r) => ({
    ...r,
    labels: shown.map(({ answer, label }) => ({ label, model: answer.model, ...(answer.record.file ? { file: answer.record.file } : {}) })),
    judges: []
  }))
  const judged = yield* askJudges(started, shown)
  const counted = judged.flatMap((
    j
  ) => (j.ranking !== undefined ? [{ ranking: j.ranking, own: j.ownLabels ?? [], tied: j.tied ?? [] }] : []))
  if (counted.length === 0) {
    const why = `0/${judged.length} rankings counted: the answers were synthesized unranked`
    yield* updateStrategy(
      started,
      RankRecord,
      (r) => ({ ...r, note: "no ranking could be counted: the answers were synthesized unranked", degraded: why })
    )
    return unranked
  }
  const byLabel = new Map(shown.map((s) => [s.label, s.answer]))
  const ranked = bordaCount(shown.map((s) => s.label), counted).flatMap((score) => {
    const answer = byLabel.get(score.label)
    return answer === undefined ? [] : [{ score, answer }]
  })
  yield* updateStrategy(started, RankRecord, (r) => ({
    ...r,
    aggregate: ranked.map(({ answer, score }) => ({ label: score.label, model: answer.model, points: score.points }))
  }))
  yield* Effect.logInfo(`ranking: ${ranked.map(({ score }) => `${score.label} ${score.points}`).join(", ")}`)
  const answers = ranked.map((r) => ({ ...r.answer, label: r.score.label }))
  return Arr.isNonEmptyReadonlyArray(answers)
    ? { answers, ranking: rankingText(ranked.map((r) => r.score), counted.length, judged.length) } satisfies Aggregated
    : unranked
})

/** `rank`: judges (`--judge`, else the panel) rank the answers; the synthesizer gets them best first. */
export const rank: Strategy<typeof RankRecord.Type, typeof RankRecord.Encoded> = {
  ...plain,
  name: "rank",
  Record: RankRecord,
  plan: ({ models, panel, settings }) => ({
    candidates: models,
    steps: { models: Option.getOrElse(settings.judges, () => panel ?? models), rounds: 1 }
  }),
  stepInstructionChars: JUDGE_INSTRUCTIONS.length,
  record: () => ({ name: "rank" }),
  aggregate: rankAnswers,
  fingerprint: (plan) => ({ judges: plan.steps.models }),
  fits: (record, plan) => sameList(record.judges?.map((j) => j.model), plan.steps.models),
  calls: (record) => record.judges ?? [],
  stepUnit: "rankings counted",
  steps: ({ judges = [] }) => {
    const counted = judges.filter((j) => j.ranking !== undefined).length
    return { done: counted, of: judges.length, text: `${counted}/${judges.length} rankings counted` }
  }
}
