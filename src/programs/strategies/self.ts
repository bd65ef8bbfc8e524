import type { Array as Arr } from "effect"
import { RunRefused } from "../../domain/errors.js"

/**
 * The `self` strategy's candidates: one model (the first given or configured) asked `samples` times, each a
 * sample at the configured temperature; they are then synthesized like any candidates' answers.
 */
export const sampledModels = (models: Arr.NonEmptyReadonlyArray<string>, samples: number): ReadonlyArray<string> =>
  Array.from({ length: samples }, () => models[0])

/** More samples than one run may have answers: refused before any call, naming both settings. */
export const tooManySamples = (samples: number, maxModels: number): RunRefused | undefined =>
  samples > maxModels
    ? new RunRefused({ message: `--samples ${samples}: more answers than the ${maxModels} one run may have (--max-models)` })
    : undefined
