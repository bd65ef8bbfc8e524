import type { Manifest } from "../../src/domain/manifest.js"
import { isRecordOf, type StrategyName, type StrategyRecordOf } from "../../src/programs/strategies/registry.js"

/** A manifest's strategy record as the named strategy's; a run of another strategy (or none) fails the test. */
export const recordOf = <N extends StrategyName>(manifest: Manifest, name: N): StrategyRecordOf<N> => {
  const record = manifest.strategy
  if (!isRecordOf(name)(record)) throw new Error(`the run's strategy is ${record?.name ?? "absent"}, not ${name}`)
  return record
}
