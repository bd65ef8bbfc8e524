import { Effect, Option } from "effect"
import { registry, type StrategyName } from "../strategies/registry.js"
import type { EvalItem, FrozenAnswer } from "./dataset.js"
import type { EvalResult } from "./evalResults.js"
import { readManifestAt, readRunFileAt } from "./runFiles.js"

// Without frozen candidates the candidates are asked, and their answers are on disk in each run: read back,
// they give every dataset the same baselines as frozen ones (best single, vote, oracle), computed by the one
// implementation in baselines.ts, and the paired test its best single candidate.

/** One run's candidates and their answers, in model order ("" for a candidate that gave none: wrong, and no vote). */
const answersIn = Effect.fnUntraced(function*(runDir: string) {
  const manifest = yield* readManifestAt(runDir)
  if (Option.isNone(manifest)) return undefined
  const answers: Array<FrozenAnswer> = []
  for (const record of manifest.value.candidates) {
    const content = record.status !== "ok" || record.file === undefined
      ? Option.none<string>()
      : yield* readRunFileAt(runDir, record.file)
    answers.push({ model: record.model, content: Option.getOrElse(content, () => "") })
  }
  return answers
})

/** Whether a strategy's runs ask the panel (each configured model once): `self` samples one model, it does not. */
const asksPanel = (strategy: StrategyName): boolean => !registry[strategy].samples

/**
 * The items, each one without frozen candidates given the answers its candidates gave in the eval's first run of
 * it (in the order of `strategies`) that asked the panel; an item with no such run keeps none, and is left out of
 * the baselines. Frozen items are as they were.
 */
export const withAskedAnswers = Effect.fnUntraced(function*(
  items: ReadonlyArray<EvalItem>,
  strategies: ReadonlyArray<StrategyName>,
  results: ReadonlyArray<EvalResult>
) {
  const runs = new Map<string, string>()
  for (const strategy of strategies.filter(asksPanel)) {
    for (const result of results) {
      if (result.strategy === strategy && result.runDir !== null && !runs.has(result.id)) runs.set(result.id, result.runDir)
    }
  }
  const out: Array<EvalItem> = []
  for (const item of items) {
    const runDir = runs.get(item.id)
    const asked = item.candidates !== undefined || runDir === undefined ? undefined : yield* answersIn(runDir)
    out.push(asked === undefined || asked.length === 0 ? item : { ...item, candidates: asked })
  }
  return out
})
