import { type Array as Arr, Option, Schema, SchemaAST } from "effect"
import type { StrategySteps } from "../../domain/format.js"
import type { CandidateRecord, StrategyRecord } from "../../domain/manifest.js"
import type { StartedRun, StrategyPlan } from "../run/started.js"
import { rank } from "./rank.js"
import { refine } from "./refine.js"
import { self } from "./self.js"
import type { Answered, Strategy } from "./strategy.js"
import { synthesize } from "./synthesize.js"

// Every strategy, one line each: the one list. The names every entry point accepts (flag, environment, config
// file, MCP argument, eval), the `--strategy` doc, the records' union and each strategy's step are read from it.
const strategies = {
  synthesize,
  rank,
  refine,
  self
}

type Strategies = typeof strategies
export type StrategyName = keyof Strategies

/** A strategy's record in the manifest, by name, with its own fields. */
export type StrategyRecordOf<N extends StrategyName> = Schema.Schema.Type<Strategies[N]["Record"]>
type EncodedOf<N extends StrategyName> = Schema.Schema.Encoded<Strategies[N]["Record"]>

/** The strategies by name, each typed with its own record (so that `registry[name]` keeps it for a generic `name`). */
export const registry: { readonly [N in StrategyName]: Strategy<StrategyRecordOf<N>, EncodedOf<N>> } = strategies

const all = Object.values(registry)

export const strategyNames: ReadonlyArray<StrategyName> = all.map((strategy) => strategy.name)

/** A record of a strategy this version knows, told apart by `name`: what a reader narrows `manifest.strategy` to. */
export const KnownStrategyRecord = Schema.Union(...all.map((strategy) => strategy.Record))
export type KnownStrategyRecord = typeof KnownStrategyRecord.Type

/** Each strategy with its one-line description: "`synthesize` (merged), `rank` (judges rank them first), …". */
export const strategiesDescribed: string = all
  .map((s) => `\`${s.name}\` (${Option.getOrElse(SchemaAST.getDescriptionAnnotation(s.Record.ast), () => "")})`)
  .join(", ")

export const StrategyName = Schema.Literal(...strategyNames)

export const isStrategyName = (name: string): name is StrategyName => Object.hasOwn(strategies, name)

/** Why a name is no strategy, in one line: `unknown strategy "vote" (known: synthesize, rank, refine, self)`. */
export const unknownStrategy = (name: string): string => `unknown strategy ${JSON.stringify(name)} (known: ${strategyNames.join(", ")})`

/** The strategy of that name, if there is one. */
export const strategyNamed = (name: string) => (isStrategyName(name) ? registry[name] : undefined)

/** A strategy's name as written (a flag, a list): trimmed, and one message for a wrong one. */
export const StrategyText: Schema.Schema<StrategyName, string> = Schema.compose(
  Schema.Trim.pipe(Schema.filter((s) => isStrategyName(s) || unknownStrategy(s))),
  StrategyName,
  { strict: false }
)

/** Whether a record is the named strategy's, with its own fields (`manifest.strategy` narrowed). */
export const isRecordOf =
  <N extends StrategyName>(name: N) => (record: StrategyRecord | undefined): record is StrategyRecord & StrategyRecordOf<N> =>
    record?.name === name && Schema.is(registry[name].Record)(record)

/** The record narrowed to its strategy's own fields: undefined for a strategy this version does not know. */
export const knownRecord = (record: StrategyRecord | undefined): KnownStrategyRecord | undefined =>
  record !== undefined && isStrategyName(record.name) && isRecordOf(record.name)(record) ? record : undefined

/** The run's strategy step, between the candidates and the synthesis. */
export const aggregateAnswers = (started: StartedRun, answered: Arr.NonEmptyReadonlyArray<Answered>) =>
  (strategyNamed(started.plan.strategy) ?? synthesize).aggregate(started, answered)

const fitsOf = <N extends StrategyName>(name: N, record: StrategyRecord, plan: StrategyPlan): boolean =>
  isRecordOf(name)(record) && registry[name].fits(record, plan)

/** Whether a run on disk, by its strategy record, was made as `plan` would make it (eval's resume). */
export const recordFits = (record: StrategyRecord, plan: StrategyPlan): boolean =>
  isStrategyName(record.name) && fitsOf(record.name, record, plan)

const callsOf = <N extends StrategyName>(name: N, record: StrategyRecord): ReadonlyArray<CandidateRecord> =>
  isRecordOf(name)(record) ? registry[name].calls(record) : []

/** The calls a strategy's step made (judges, refinements), whichever it is: paid for and listed like the others. */
export const strategyCalls = (record: StrategyRecord | undefined): ReadonlyArray<CandidateRecord> =>
  record !== undefined && isStrategyName(record.name) ? callsOf(record.name, record) : []

const stepsOf = <N extends StrategyName>(name: N, record: StrategyRecord): StrategySteps | undefined => {
  const steps = isRecordOf(name)(record) ? registry[name].steps(record) : undefined
  return steps === undefined ? undefined : { ...steps, name, text: `${name}: ${steps.text}`, degraded: record.degraded }
}

/** What a strategy other than `synthesize` did, as its record says: "rank: 3/4 rankings counted" (the summary line, eval). */
export const strategySteps = (record: StrategyRecord | undefined): StrategySteps | undefined =>
  record !== undefined && isStrategyName(record.name) ? stepsOf(record.name, record) : undefined
