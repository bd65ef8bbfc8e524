import type { EvalItem } from "./dataset.js"
import type { Scorer } from "./scorers.js"
import { type Accuracy, accuracyOf } from "./stats.js"

// What the frozen candidates score on their own, without a single call: each candidate, the best of them
// (chosen in hindsight, on these very items), a majority vote of their final answers, and the oracle (at
// least one of them right: the ceiling of any method that picks one of their answers).

/** What a baseline costs: nothing, it is read off the frozen answers. */
const free = { cost: 0, tokens: { prompt: 0, completion: 0 }, latencyMs: null } as const
type Row = Accuracy & typeof free

/**
 * Who wins a tied vote: the tied answer given by the best single system (`best-single`, the default), or the
 * tied answer given first in the line (`first-in-line`). On GSM8K the line begins with the weakest system,
 * so the policy alone moves the vote by twelve points: the report gives both.
 */
export type TiePolicy = "best-single" | "first-in-line"

export interface Baselines {
  /** Items that have frozen candidates (the others do not count here). */
  readonly items: number
  readonly candidates: ReadonlyArray<{ readonly model: string } & Row>
  readonly bestSingle: { readonly model: string } & Row
  /** The vote with a tie going to the best single system's answer. */
  readonly majority: Row & { readonly tiePolicy: "best-single" }
  /** The same votes with a tie going to the first answer of the line. */
  readonly majorityFirstInLine: Row & { readonly tiePolicy: "first-in-line" }
  /** Items where two or more answers share the most votes (there the tie policy decides). */
  readonly tied: number
  readonly oracle: Row
}

export interface Vote {
  /** The winning answer (as given, not extracted), or undefined when no candidate gives a final answer. */
  readonly answer: string | undefined
  /** Whether two or more answers shared the most votes. */
  readonly tied: boolean
}

/**
 * The answer a plurality of the candidates gives (compared in the scorer's extracted form). A tie goes to the
 * tied answer of the candidate that `rank` puts first (lower is better; by default the line's order). A
 * candidate without a final answer abstains.
 */
export const majorityVote = (
  answers: ReadonlyArray<string>,
  scorer: Scorer,
  rank: (index: number) => number = (index) => index
): Vote => {
  const votes = new Map<string, Array<number>>()
  answers.forEach((answer, index) => {
    const key = scorer.extract(answer)
    if (key !== undefined) votes.set(key, [...(votes.get(key) ?? []), index])
  })
  const top = Math.max(0, ...[...votes.values()].map((v) => v.length))
  const leaders = [...votes.values()].filter((v) => v.length === top).flat()
  if (leaders.length === 0) return { answer: undefined, tied: false }
  const winner = leaders.reduce((best, index) => (rank(index) < rank(best) ? index : best))
  return { answer: answers[winner], tied: leaders.length > top }
}

/** The first-in-line vote's answer (kept for callers that only want the answer). */
export const majorityAnswer = (answers: ReadonlyArray<string>, scorer: Scorer): string | undefined => majorityVote(answers, scorer).answer

/** Each model's correct count over the items, in order of first appearance. */
const correctPerModel = (frozen: ReadonlyArray<EvalItem>, scorer: Scorer): Map<string, number> => {
  const perModel = new Map<string, number>()
  for (const item of frozen) {
    for (const candidate of item.candidates ?? []) {
      const right = scorer.correct(candidate.content, item.answer)
      perModel.set(candidate.model, (perModel.get(candidate.model) ?? 0) + (right ? 1 : 0))
    }
  }
  return perModel
}

/** Whether each baseline was right on one item with frozen candidates. */
export interface ItemBaselines {
  readonly id: string
  /** The best single system (over all the items) on this item. */
  readonly bestSingle: boolean
  /** The vote, a tie going to the best single system's answer. */
  readonly majority: boolean
  readonly majorityFirstInLine: boolean
  readonly tied: boolean
  readonly oracle: boolean
}

/** Each item's verdicts, for the paired comparison; undefined when no item has frozen candidates. */
export const perItemBaselines = (
  items: ReadonlyArray<EvalItem>,
  scorer: Scorer
): { readonly bestSingle: string; readonly items: ReadonlyArray<ItemBaselines> } | undefined => {
  const frozen = items.filter((item) => item.candidates !== undefined)
  if (frozen.length === 0) return undefined
  const perModel = correctPerModel(frozen, scorer)
  // Models from the best to the worst; equal ones keep their order of appearance (sort is stable).
  const standing = [...perModel].sort(([, a], [, b]) => b - a).map(([model]) => model)
  const best = standing[0] ?? ""
  return {
    bestSingle: best,
    items: frozen.map((item) => {
      const candidates = item.candidates ?? []
      const right = (answer: string | undefined) => answer !== undefined && scorer.correct(answer, item.answer)
      const contents = candidates.map((c) => c.content)
      const first = majorityVote(contents, scorer)
      const vote = majorityVote(contents, scorer, (index) => standing.indexOf(candidates[index]?.model ?? ""))
      return {
        id: item.id,
        // A model missing from an item counts as wrong there.
        bestSingle: right(candidates.find((c) => c.model === best)?.content),
        majority: right(vote.answer),
        majorityFirstInLine: right(first.answer),
        tied: first.tied,
        oracle: candidates.some((c) => right(c.content))
      }
    })
  }
}

/** The baselines over the items that have frozen candidates, or undefined when none has. */
export const computeBaselines = (items: ReadonlyArray<EvalItem>, scorer: Scorer): Baselines | undefined => {
  const verdicts = perItemBaselines(items, scorer)
  if (verdicts === undefined) return undefined
  const frozen = items.filter((item) => item.candidates !== undefined)
  const count = (key: Exclude<keyof ItemBaselines, "id">) => verdicts.items.filter((item) => item[key]).length
  // A model missing from some items counts as wrong there: every figure is over the same items.
  const row = (correct: number) => ({ ...accuracyOf(correct, frozen.length), ...free })
  const candidates = [...correctPerModel(frozen, scorer)].map(([model, correct]) => ({ model, ...row(correct) }))
  return {
    items: frozen.length,
    candidates,
    bestSingle: candidates.find((c) => c.model === verdicts.bestSingle) ?? { model: verdicts.bestSingle, ...row(0) },
    majority: { ...row(count("majority")), tiePolicy: "best-single" },
    majorityFirstInLine: { ...row(count("majorityFirstInLine")), tiePolicy: "first-in-line" },
    tied: count("tied"),
    oracle: row(count("oracle"))
  }
}
