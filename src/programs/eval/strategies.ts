import { type Effect, Schema } from "effect"
import type { SettingsValue } from "../../settings/values.js"

import { synthesizeGiven } from "../resynthesize.js"
import type { RunEvent } from "../run/request.js"
import type { StrategyPlan } from "../run/started.js"
import { runPipeline } from "../runPipeline.js"
import { registry, type StrategyName, StrategyText } from "../strategies/registry.js"
import type { EvalItem } from "./dataset.js"

// The aggregation strategies eval can measure, by name. Each one turns an item into a normal run: with
// frozen candidates only its aggregation step is paid for (the synthesis; rank's judges, the configured
// models or --judge; refine's rounds, by the configured models), without them the candidates are asked too.
// A strategy that samples one model (`self`) has no use for frozen answers from several: it always asks its model.

/** `--strategies a,b`: names separated by commas, each known, none twice. */
export const StrategyList = Schema.transform(
  Schema.String,
  Schema.Array(StrategyText).pipe(Schema.minItems(1, { message: () => "needs at least one strategy" })),
  {
    // Not strict: the names are checked by the target schema, with its message.
    strict: false,
    decode: (s) => [...new Set(s.split(",").map((name) => name.trim()).filter((name) => name !== ""))],
    encode: (names) => names.join(",")
  }
)

/** Whether a strategy pays for its own candidates on this item (the frozen ones, if any, are not used). */
export const asksCandidates = (strategy: StrategyName, item: EvalItem): boolean =>
  item.candidates === undefined || registry[strategy].samples

/** What a strategy's runs ask under these settings (over frozen answers too: the panel is the configured models). */
export const evalPlan = (strategy: StrategyName, settings: SettingsValue): StrategyPlan =>
  registry[strategy].plan({ settings, models: settings.models })

export const runStrategy = (
  strategy: StrategyName,
  item: EvalItem,
  panel: ReadonlyArray<string>,
  onEvent: (event: RunEvent) => Effect.Effect<void>
) =>
  item.candidates === undefined || asksCandidates(strategy, item)
    ? runPipeline({ prompt: item.question, onEvent })
    : synthesizeGiven({ prompt: item.question, answers: item.candidates, panel, onEvent })
