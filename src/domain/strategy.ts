import { Schema } from "effect"

// How a run turns its candidates' answers into one: the names every entry point (flag, environment, config
// file, MCP argument, eval) accepts. What each does: src/programs/strategies/.

export const strategyNames = ["synthesize", "rank", "refine", "self"] as const

export const StrategyName = Schema.Literal(...strategyNames)
export type StrategyName = typeof StrategyName.Type

const isStrategy = Schema.is(StrategyName)

/** A strategy's name as written (a flag, the environment, a list): trimmed, and one message for a wrong one. */
export const StrategyText: Schema.Schema<StrategyName, string> = Schema.compose(
  Schema.Trim.pipe(
    Schema.filter((s) => isStrategy(s) || `unknown strategy ${JSON.stringify(s)} (known: ${strategyNames.join(", ")})`)
  ),
  StrategyName,
  { strict: false }
)
