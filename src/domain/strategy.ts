import { Schema } from "effect"

// How a run turns its candidates' answers into one: the names every entry point (flag, environment, config
// file, MCP argument, eval) accepts. What each does: src/programs/strategies/.

export const strategyNames = ["synthesize", "rank", "refine", "self"] as const

export const StrategyName = Schema.Literal(...strategyNames).annotations({
  message: (issue) =>
    `unknown strategy${issue._tag === "Type" ? ` ${JSON.stringify(issue.actual)}` : ""} (known: ${strategyNames.join(", ")})`
})
export type StrategyName = typeof StrategyName.Type
