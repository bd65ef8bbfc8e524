import { Array as Arr, Effect } from "effect"
import type { StartedRun } from "../run/start.js"
import { type Answered, rankAnswers } from "./rank.js"
import { refineAnswers } from "./refine.js"

export interface Aggregated {
  /** What the synthesizer merges, in the order it gets them when `ranking` is given. */
  readonly answers: Arr.NonEmptyReadonlyArray<Answered>
  /** `rank`: the judges' verdict, as the synthesizer reads it. */
  readonly ranking: string | undefined
}

/**
 * The strategy's step between the candidates and the synthesis. `synthesize` and `self` have none (`self`
 * differs in its candidates: see run/start.ts); `rank` orders the answers; `refine` replaces them.
 */
export const aggregateAnswers = Effect.fnUntraced(function*(
  started: StartedRun,
  answered: Arr.NonEmptyReadonlyArray<Answered>
) {
  switch (started.plan.strategy) {
    case "rank": {
      const ranked = yield* rankAnswers(started, answered)
      return (Arr.isNonEmptyReadonlyArray(ranked.answers)
        ? { answers: ranked.answers, ranking: ranked.ranking }
        : { answers: answered, ranking: undefined }) satisfies Aggregated
    }
    case "refine":
      return { answers: yield* refineAnswers(started, answered), ranking: undefined } satisfies Aggregated
    case "synthesize":
    case "self":
      return { answers: answered, ranking: undefined } satisfies Aggregated
  }
})
