import type { EvalItem } from "./dataset.js"
import type { Scorer } from "./scorers.js"
import { type Accuracy, accuracyOf } from "./stats.js"

// What the frozen candidates score on their own, without a single call: each candidate, the best of them
// (chosen in hindsight, on these very items), a majority vote of their final answers, and the oracle (at
// least one of them right: the ceiling of any method that picks one of their answers).

/** What a baseline costs: nothing, it is read off the frozen answers. */
const free = { cost: 0, tokens: { prompt: 0, completion: 0 }, latencyMs: null } as const
type Row = Accuracy & typeof free

export interface Baselines {
  /** Items that have frozen candidates (the others do not count here). */
  readonly items: number
  readonly candidates: ReadonlyArray<{ readonly model: string } & Row>
  readonly bestSingle: { readonly model: string } & Row
  readonly majority: Row
  readonly oracle: Row
}

/**
 * The answer a plurality of the candidates gives (compared in the scorer's extracted form); a tie goes to
 * the answer given first in the line's candidate order. A candidate without a final answer abstains.
 */
export const majorityAnswer = (answers: ReadonlyArray<string>, scorer: Scorer): string | undefined => {
  const votes = new Map<string, { count: number; first: string }>()
  for (const answer of answers) {
    const key = scorer.extract(answer)
    if (key === undefined) continue
    const vote = votes.get(key)
    if (vote) vote.count++
    else votes.set(key, { count: 1, first: answer })
  }
  let winner: { count: number; first: string } | undefined
  // Map iteration follows first appearance, so a strict `>` keeps the earliest of tied answers.
  for (const vote of votes.values()) if (winner === undefined || vote.count > winner.count) winner = vote
  return winner?.first
}

/** The baselines over the items that have frozen candidates, or undefined when none has. */
export const computeBaselines = (items: ReadonlyArray<EvalItem>, scorer: Scorer): Baselines | undefined => {
  const frozen = items.filter((item) => item.candidates !== undefined)
  if (frozen.length === 0) return undefined
  const perModel = new Map<string, number>()
  let majority = 0
  let oracle = 0
  for (const item of frozen) {
    const candidates = item.candidates ?? []
    let any = false
    for (const candidate of candidates) {
      const right = scorer.correct(candidate.content, item.answer)
      perModel.set(candidate.model, (perModel.get(candidate.model) ?? 0) + (right ? 1 : 0))
      any ||= right
    }
    if (any) oracle++
    const voted = majorityAnswer(candidates.map((c) => c.content), scorer)
    if (voted !== undefined && scorer.correct(voted, item.answer)) majority++
  }
  // A model missing from some items counts as wrong there: every figure is over the same items.
  const candidates = [...perModel].map(([model, correct]) => ({ model, ...accuracyOf(correct, frozen.length), ...free }))
  const bestSingle = candidates.reduce((best, c) => (c.correct > best.correct ? c : best))
  return {
    items: frozen.length,
    candidates,
    bestSingle,
    majority: { ...accuracyOf(majority, frozen.length), ...free },
    oracle: { ...accuracyOf(oracle, frozen.length), ...free }
  }
}
