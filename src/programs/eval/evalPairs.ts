import { Effect } from "effect"
import * as path from "node:path"
import type { SettingsValue } from "../../settings/values.js"
import { modelCallOptions, sentOptions } from "../run/callPlan.js"
import type { StrategyPlan } from "../run/started.js"
import { registry, type StrategyName } from "../strategies/registry.js"
import { type EvalItem, fingerprintOf } from "./dataset.js"
import { type EvalResult, keyOf, rescore } from "./evalResults.js"
import type { Scorer } from "./scorers.js"
import { SOLO } from "./solo.js"
import { asksCandidates, evalPlan } from "./strategies.js"

// The (strategy, item) pairs of an eval, and which of them an earlier pass's result lines answer already.

/** What an eval runs on every item: a strategy, or the synthesizer-alone baseline (solo.ts). */
export type EvalStrategy = StrategyName | typeof SOLO

export interface EvalPair {
  readonly strategy: EvalStrategy
  readonly item: EvalItem
  /** The pair's result line without its run's part. */
  readonly base: Pick<EvalResult, "strategy" | "id" | "line" | "fingerprint" | "scorer" | "answer">
}

/** Every pair, in strategy then dataset order, with the fingerprint of what its run is made from. */
export const pairsOf = (
  items: ReadonlyArray<EvalItem>,
  strategies: ReadonlyArray<StrategyName>,
  scorer: Scorer,
  settings: SettingsValue
): ReadonlyArray<EvalPair> =>
  strategies.flatMap((strategy) =>
    items.map((item) => {
      const plan = evalPlan(strategy, settings)
      const fingerprint = fingerprintOf({
        strategy,
        question: item.question,
        candidates: item.candidates ?? null,
        models: item.candidates === undefined ? settings.models : null,
        synthesizer: settings.synthesizer,
        ...callsOf(strategy, item, settings, plan),
        // What else a strategy's answer depends on: who judges, refines or is sampled, and how often.
        ...registry[strategy].fingerprint(plan, settings)
      })
      return {
        strategy,
        item,
        base: { strategy, id: item.id, line: item.line, fingerprint, scorer: scorer.name, answer: item.answer }
      }
    })
  )

/** The synthesizer-alone pairs: the question, the synthesizer and how it is sent, fingerprinted as the others. */
export const soloPairsOf = (
  items: ReadonlyArray<EvalItem>,
  scorer: Scorer,
  settings: SettingsValue
): ReadonlyArray<EvalPair> =>
  items.map((item) => {
    const fingerprint = fingerprintOf({
      strategy: SOLO,
      question: item.question,
      synthesizer: settings.synthesizer,
      calls: [[settings.synthesizer, sentOptions(modelCallOptions(settings, settings.synthesizer, false))]]
    })
    return {
      strategy: SOLO,
      item,
      base: { strategy: SOLO, id: item.id, line: item.line, fingerprint, scorer: scorer.name, answer: item.answer }
    }
  })

/**
 * What each call of a pair's run is sent besides its messages, from the function the calls themselves use
 * (run/callPlan.ts), so that a setting added there changes the fingerprint too: temperature, max tokens and
 * reasoning (the run's, or a model object's in the config file), a model object's provider routing and
 * fallbacks, and web search (candidates only). Every model that may be asked is in: the candidates when they
 * are asked, rank's judges, and the synthesizers (a fallback answers when the first fails). The cap on the
 * answers the synthesizer and judges read changes their prompt, and so does the report mode. Timeouts,
 * retries, quorum and deadlines are out: they decide how long a run waits, not what it asks, and only ok and partial results are reused.
 *
 * A result line of an earlier version has a fingerprint without these: it is not reused, and its pair is
 * asked once more. It cannot say which temperature it was made with, so taking it as made with today's would
 * be the very mistake this prevents; the cost is one pass, once.
 */
const callsOf = (strategy: StrategyName, item: EvalItem, settings: SettingsValue, plan: StrategyPlan) => {
  const candidates = asksCandidates(strategy, item)
  const asked = [
    ...(candidates ? plan.candidates : []),
    ...plan.steps.models,
    settings.synthesizer,
    ...settings.fallbackSynthesizers
  ]
  return {
    // The synthesizer and judges never search the web (see run/synthesize.ts, strategies/panel.ts).
    calls: [...new Set(asked)].sort().map((model) => [model, sentOptions(modelCallOptions(settings, model, false))]),
    web: candidates && settings.web,
    synthesisMaxChars: settings.synthesisMaxChars,
    // How the synthesizer is asked for its report changes its prompt, and may change its answer.
    reportVia: settings.reportVia
  }
}

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

/**
 * The runs (by id) that earlier result lines recorded under another fingerprint than their pair's today: made
 * with other settings, they are not taken back from disk either (see evalResume.ts), whatever their manifest says.
 */
export const staleRuns = (pairs: ReadonlyArray<EvalPair>, previous: ReadonlyMap<string, EvalResult>): ReadonlySet<string> => {
  const now = new Map(pairs.map((pair) => [keyOf(pair.strategy, pair.item.id), pair.base.fingerprint]))
  const stale = new Set<string>()
  for (const [key, result] of previous) {
    if (result.runDir !== null && now.get(key) !== result.fingerprint) stale.add(path.basename(result.runDir))
  }
  return stale
}
