import type { Array as Arr } from "effect"
import type { StrategyRecord } from "../../domain/manifest.js"
import type { StrategyName, StrategyRecordOf } from "../../domain/strategy.js"
import type { StartedRun, StrategyPlan } from "../run/started.js"
import { rank } from "./rank.js"
import { refine } from "./refine.js"
import { self } from "./self.js"
import type { Answered, Strategy } from "./strategy.js"
import { synthesize } from "./synthesize.js"

// Every strategy, one line each. Its type makes the list and the manifest's records (whose names the
// settings accept, src/domain/strategy.ts) agree: a strategy in one and not the other does not compile.

export const registry: { readonly [N in StrategyName]: Strategy<N> } = {
  synthesize,
  rank,
  refine,
  self
}

/** The run's strategy step, between the candidates and the synthesis. */
export const aggregateAnswers = (started: StartedRun, answered: Arr.NonEmptyReadonlyArray<Answered>) =>
  registry[started.plan.strategy].aggregate(started, answered)

/** Whether a run on disk, by its strategy record, was made as `plan` would make it (eval's resume). */
export const recordFits = (record: StrategyRecord, plan: StrategyPlan): boolean => fitsOf(record.name)(record, plan)

const fitsOf = <N extends StrategyName>(name: N): (record: StrategyRecordOf<N>, plan: StrategyPlan) => boolean => registry[name].fits
