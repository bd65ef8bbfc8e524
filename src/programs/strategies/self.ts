import type { Array as Arr } from "effect"

/**
 * The `self` strategy's candidates: one model (the first given or configured) asked `samples` times, each a
 * sample at the configured temperature; they are then synthesized like any candidates' answers.
 */
export const sampledModels = (models: Arr.NonEmptyReadonlyArray<string>, samples: number): ReadonlyArray<string> =>
  Array.from({ length: samples }, () => models[0])
