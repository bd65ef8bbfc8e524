import { type Effect, Schema } from "effect"
import { synthesizeGiven } from "../resynthesize.js"
import { type RunEvent, runPipeline } from "../runPipeline.js"
import type { EvalItem } from "./dataset.js"

// The aggregation strategies eval can measure, by name. Each one turns an item into a normal run: with
// frozen candidates only its aggregation step is paid for, without them the candidates are asked too.

export const knownStrategies = ["synthesize"] as const

export const StrategyName = Schema.Literal(...knownStrategies).annotations({
  message: (issue) =>
    `unknown strategy ${issue._tag === "Type" ? JSON.stringify(issue.actual) : ""} (known: ${knownStrategies.join(", ")})`.replace(
      "  ",
      " "
    )
})
export type StrategyName = typeof StrategyName.Type

/** `--strategies a,b`: names separated by commas, each known, none twice. */
export const StrategyList = Schema.transform(
  Schema.String,
  Schema.Array(StrategyName).pipe(Schema.minItems(1, { message: () => "needs at least one strategy" })),
  {
    // Not strict: the names are checked by the target schema, with its message.
    strict: false,
    decode: (s) => [...new Set(s.split(",").map((name) => name.trim()).filter((name) => name !== ""))],
    encode: (names) => names.join(",")
  }
)

export const runStrategy = (
  strategy: StrategyName,
  item: EvalItem,
  onEvent: (event: RunEvent) => Effect.Effect<void>
) => {
  switch (strategy) {
    case "synthesize":
      return item.candidates !== undefined
        ? synthesizeGiven({ prompt: item.question, answers: item.candidates, onEvent })
        : runPipeline({ prompt: item.question, onEvent })
  }
}
