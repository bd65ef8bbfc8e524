import { Effect } from "effect"
import type { StrategyName } from "../../domain/strategy.js"
import type { SettingsValue } from "../../services/Settings.js"
import { type EvalItem, fingerprintOf } from "./dataset.js"
import { type EvalResult, keyOf, rescore } from "./evalResults.js"
import type { Scorer } from "./scorers.js"

// The (strategy, item) pairs of an eval, and which of them an earlier pass's result lines answer already.

export interface EvalPair {
  readonly strategy: StrategyName
  readonly item: EvalItem
  /** The pair's result line without its run's part. */
  readonly base: Pick<EvalResult, "strategy" | "id" | "line" | "fingerprint" | "scorer" | "answer">
}

/** Every pair, in strategy then dataset order, with the fingerprint of what its run is made from. */
export const pairsOf = (
  items: ReadonlyArray<EvalItem>,
  strategies: ReadonlyArray<StrategyName>,
  scorer: Scorer,
  settings: SettingsValue,
  judges: ReadonlyArray<string>
): ReadonlyArray<EvalPair> =>
  strategies.flatMap((strategy) =>
    items.map((item) => {
      const fingerprint = fingerprintOf({
        strategy,
        question: item.question,
        candidates: item.candidates ?? null,
        models: item.candidates === undefined ? settings.models : null,
        synthesizer: settings.synthesizer,
        // What else a strategy's answer depends on: who judges, refines or is sampled, and how often.
        ...(strategy === "rank" ? { judges } : {}),
        ...(strategy === "refine" ? { refiners: settings.models, rounds: settings.rounds } : {}),
        ...(strategy === "self" ? { sampled: settings.models[0], samples: settings.samples } : {})
      })
      return {
        strategy,
        item,
        base: { strategy, id: item.id, line: item.line, fingerprint, scorer: scorer.name, answer: item.answer }
      }
    })
  )

/** The pairs an earlier result answered with the same fingerprint, by (strategy, id), rescored if need be. */
export const reuseEarlier = Effect.fnUntraced(function*(
  pairs: ReadonlyArray<EvalPair>,
  previous: ReadonlyMap<string, EvalResult>,
  scorer: Scorer
) {
  const reused = new Map<string, EvalResult>()
  for (const pair of pairs) {
    const before = previous.get(keyOf(pair.strategy, pair.item.id))
    if (before === undefined || before.fingerprint !== pair.base.fingerprint) continue
    if (before.status !== "ok" && before.status !== "partial") continue
    const rescored = yield* rescore(before, scorer.name, pair.item.answer, scorer)
    if (rescored !== undefined) reused.set(keyOf(pair.strategy, pair.item.id), rescored)
  }
  return reused
})
