import { Effect, Option, Schema } from "effect"
import type { Manifest } from "../../domain/manifest.js"
import { SentOptions } from "../../domain/modelOptions.js"
import type { SettingsValue } from "../../settings/values.js"
import { previousRunsFor, type StrategyMatch } from "../batchResume.js"
import { modelCallOptions, sentOptions } from "../run/callPlan.js"

import type { RunResult } from "../run/request.js"
import { recordFits, strategyCalls, type StrategyName } from "../strategies/registry.js"

import { sha256Hex } from "../../domain/hash.js"
import type { FrozenAnswer } from "./dataset.js"
import type { EvalPair } from "./evalPairs.js"
import { fellBackToCandidate, keyOf } from "./evalResults.js"
import { readRunFileAt } from "./runFiles.js"
import { asksCandidates, evalPlan } from "./strategies.js"

// What an earlier pass of an eval left in the runs directory without a result line (a results file that hit a
// full disk, a process killed): a complete run is recorded without a call, an interrupted `synthesize` run is
// synthesized again from the answers on disk. A run over frozen candidates is taken only when its answers on
// disk are the item's, word for word (its manifest names their models only).

/** A pair's run on disk: its result as a run of this pass would give it, or an interrupted run to synthesize again. */
export type EvalFound =
  | { readonly _tag: "Answered"; readonly run: RunResult }
  | { readonly _tag: "Interrupted"; readonly runId: string }

type Pair = Pick<EvalPair, "item"> & { readonly strategy: StrategyName }

/** What a strategy's answer depends on besides the prompt, models and synthesizer, as its manifest records it. */
const matchFor = (strategy: StrategyName, settings: SettingsValue): StrategyMatch => {
  const plan = evalPlan(strategy, settings)
  // A run made before strategies were recorded is a `synthesize` run (the name is compared first).
  return { name: strategy, fits: (record) => record === undefined || recordFits(record, plan) }
}

/** The models a pair's run is made with: the frozen answers' (given, not asked), or as the run plans them. */
const modelsOf = (pair: Pair, settings: SettingsValue): ReadonlyArray<string> =>
  !asksCandidates(pair.strategy, pair.item) && pair.item.candidates !== undefined
    ? pair.item.candidates.map((answer) => answer.model)
    : evalPlan(pair.strategy, settings).candidates

const sameSent = Schema.equivalence(SentOptions)

/**
 * Whether every call a run's manifest records was sent as this pass would send it (a model object's own
 * options in the config file may have changed since; the run key compares only the run-wide ones). A record
 * without options (frozen answers are given, not sent) is passed over.
 */
const sentAsNow = (manifest: Manifest, settings: SettingsValue, candidatesAsked: boolean): boolean => {
  const calls = [
    ...(candidatesAsked ? manifest.candidates.map((record) => ({ record, web: settings.web })) : []),
    ...strategyCalls(manifest.strategy).map((record) => ({ record, web: false })),
    ...(manifest.synthesis !== undefined ? [{ record: manifest.synthesis, web: false }] : [])
  ]
  return calls.every(({ record, web }) =>
    record.options === undefined || sameSent(record.options, sentOptions(modelCallOptions(settings, record.model, web)))
  )
}

/** Whether a run's answers on disk are the frozen ones, word for word (the manifest names only their models). */
const sameAnswers = Effect.fnUntraced(function*(runDir: string, manifest: Manifest, frozen: ReadonlyArray<FrozenAnswer>) {
  if (manifest.candidates.length !== frozen.length) return false
  for (const [index, record] of manifest.candidates.entries()) {
    if (record.file === undefined) return false
    const text = yield* readRunFileAt(runDir, record.file)
    if (Option.isNone(text) || text.value !== frozen[index]?.content) return false
  }
  return true
})

/**
 * The runs on disk made since the results file was for the pairs still to do, by (strategy, id), but none of
 * `stale` (a run a result line recorded under settings that changed since).
 */
export const evalRunsOnDisk = Effect.fnUntraced(function*(
  output: string,
  todo: ReadonlyArray<Pair>,
  settings: SettingsValue,
  stale: ReadonlySet<string>
) {
  const found = new Map<string, EvalFound>()
  for (const strategy of new Set(todo.map((pair) => pair.strategy))) {
    const pairs = new Map(todo.filter((pair) => pair.strategy === strategy).map((pair) => [pair.item.id, pair]))
    const wanted = [...pairs.values()].map((pair) => ({
      id: pair.item.id,
      promptSha256: sha256Hex(pair.item.question),
      models: modelsOf(pair, settings),
      synthesizer: settings.synthesizer
    }))
    const runs = yield* previousRunsFor(output, wanted, matchFor(strategy, settings))
    for (const [id, run] of runs) {
      const item = pairs.get(id)?.item
      if (item === undefined || stale.has(run.runId)) continue
      const frozen = asksCandidates(strategy, item) ? undefined : item.candidates
      if (run._tag === "Interrupted") {
        // Re-synthesis is `synthesize` over the answers on disk: for rank, refine or self it would skip the
        // strategy's own step (judges, rounds), so such a run is asked again instead. Over frozen answers,
        // asking again pays the synthesis only, as a re-synthesis would.
        if (strategy === "synthesize" && frozen === undefined) found.set(keyOf(strategy, id), run)
        continue
      }
      // A run that fell back to a candidate's answer is a failure to eval: it is asked again, as its line would be.
      if (fellBackToCandidate(run.manifest)) continue
      if (frozen !== undefined && !(yield* sameAnswers(run.runDir, run.manifest, frozen))) continue
      if (!sentAsNow(run.manifest, settings, frozen === undefined)) continue
      // The final answer is what is scored: a run whose final.md cannot be read is asked again.
      const final = yield* readRunFileAt(run.runDir, "final.md")
      if (Option.isNone(final)) continue
      found.set(keyOf(strategy, id), { _tag: "Answered", run: { manifest: run.manifest, final: final.value, runDir: run.runDir } })
    }
  }
  return found
})
