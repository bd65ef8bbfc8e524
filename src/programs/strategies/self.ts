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

/**
 * What `self` leaves out when more than one model is named for a run (by an MCP call's `models` or the CLI's
 * `-m`): it samples the first only, and the others are said not to be asked rather than dropped silently.
 */
export const unsampledWarning = (strategy: string, named: ReadonlyArray<string> | undefined): string | undefined =>
  strategy === "self" && named !== undefined && named.length > 1
    ? `strategy self samples ${named[0]} only: ${named.slice(1).join(", ")} not asked`
    : undefined
