import { Option, Schema, SchemaAST } from "effect"
import { StrategyRecord } from "./manifest.js"

// How a run turns its candidates' answers into one: the names every entry point (flag, environment, config
// file, MCP argument, eval) accepts, read from the manifest's records (one per strategy), so that a strategy
// is named in one place here; src/programs/strategies/registry.ts must have a module for each (its type says so).

export type StrategyName = StrategyRecord["name"]

/** A strategy's record in the manifest, by name. */
export type StrategyRecordOf<N extends StrategyName> = Extract<StrategyRecord, { readonly name: N }>

export const strategyNames: ReadonlyArray<StrategyName> = StrategyRecord.members.map((m) => m.fields.name.literals[0])

/** Each strategy with its one-line description: "`synthesize` (merged), `rank` (judges rank them first), …". */
export const strategiesDescribed: string = StrategyRecord.members
  .map((m) => `\`${m.fields.name.literals[0]}\` (${Option.getOrElse(SchemaAST.getDescriptionAnnotation(m.ast), () => "")})`)
  .join(", ")

export const StrategyName = Schema.Literal(...strategyNames)

const isStrategy = Schema.is(StrategyName)

/** A strategy's name as written (a flag, the environment, a list): trimmed, and one message for a wrong one. */
export const StrategyText: Schema.Schema<StrategyName, string> = Schema.compose(
  Schema.Trim.pipe(
    Schema.filter((s) => isStrategy(s) || `unknown strategy ${JSON.stringify(s)} (known: ${strategyNames.join(", ")})`)
  ),
  StrategyName,
  { strict: false }
)

/** Whether a record is the named strategy's (`manifest.strategy` narrowed to its fields). */
export const isRecordOf = <N extends StrategyName>(name: N) => (record: StrategyRecord | undefined): record is StrategyRecordOf<N> =>
  record?.name === name
