import { type Array as Arr, Effect, Schema } from "effect"
import { type CandidateRecord, sharedStrategyFields, type StrategyRecord } from "../../domain/manifest.js"
import type { RunStore } from "../../services/runStore.js"
import type { Settings } from "../../services/settings.js"
import type { SettingsValue } from "../../settings/values.js"
import type { CandidateOutcome } from "../run/fanOut.js"
import type { StartedRun, StrategyPlan } from "../run/started.js"
import type { stepCall } from "./panel.js"

// What a strategy is: one module implements it whole, and registry.ts lists them. Everything that varies
// by strategy (who is asked, the calls it adds and what they cost, its step between the candidates and the
// synthesis, what it refuses and warns of, its manifest record and its schema, what eval's resume compares)
// is here.

/**
 * A strategy's record schema: its `name` (the literal the registry's union is told apart by, the name
 * `--strategy` takes), its one-line description (`--strategy`'s help and docs list it), and its own fields.
 */
export const strategyRecord = <N extends string, F extends Schema.Struct.Fields>(name: N, description: string, fields: F) =>
  Schema.Struct({ name: Schema.Literal(name), ...fields, ...sharedStrategyFields }).annotations({ description })

/** What a strategy's own step did, by its record: "3/4 rankings counted" (`done` of `of`). */
export interface StepCount {
  readonly done: number
  readonly of: number
  readonly text: string
}

/** An answer to merge; `label`: the one the judges saw it under, which the synthesizer keeps. */
export type Answered = CandidateOutcome & { readonly content: string; readonly label?: string }

export interface Aggregated {
  /** What the synthesizer merges, in the order it gets them when `ranking` is given. */
  readonly answers: Arr.NonEmptyReadonlyArray<Answered>
  /** `rank`: the judges' verdict, as the synthesizer reads it. */
  readonly ranking: string | undefined
}

/** What a strategy's step may use: the services of a step call (strategies/panel.ts), the store and the settings. */
export type StepServices = Effect.Effect.Context<ReturnType<typeof stepCall>> | RunStore | Settings

export interface PlanInput {
  /** The settings the run goes by (a call's own values applied): `rounds`, `samples`, `judges`… */
  readonly settings: SettingsValue
  /** The models named for the run (the call's, else the configured ones). */
  readonly models: ReadonlyArray<string>
  /** The models that rank or refine when they are not the candidates (an eval's frozen answers come from none). */
  readonly panel?: ReadonlyArray<string> | undefined
}

/** A strategy whose records are `R` (`I` as written in `run.json`). */
export interface Strategy<R extends StrategyRecord, I = R> {
  readonly name: R["name"]
  /** Its record in the manifest: made with `strategyRecord(name, description, fields)`. */
  readonly Record: Schema.Schema<R, I>
  /** Who it asks and which calls it adds, from the run's settings, before anything is paid for. */
  readonly plan: (input: PlanInput) => StrategyPlan
  /** The length of the instructions each of its own calls reads besides the question and the answers (for `--max-cost`). */
  readonly stepInstructionChars: number
  /**
   * Its candidates are samples of one model: the model is named more than once on purpose, they are asked
   * even where answers are given (an eval's frozen ones), and answers given to a re-synthesis are its samples
   * already (that run is a plain `synthesize`).
   */
  readonly samples: boolean
  /** Why a run cannot start with these settings, before any call (one line naming the settings), if it cannot. */
  readonly refusal: (plan: StrategyPlan, settings: SettingsValue) => string | undefined
  /** What it says once at the start: models named for the run that it does not ask. */
  readonly warning: (named: ReadonlyArray<string> | undefined) => string | undefined
  /** Its manifest record before its step ran. */
  readonly record: (plan: StrategyPlan) => R
  /** Its step between the candidates and the synthesis: the answers as the synthesizer gets them (it may reorder or replace them). */
  readonly aggregate: (
    started: StartedRun,
    answered: Arr.NonEmptyReadonlyArray<Answered>
  ) => Effect.Effect<Aggregated, never, StepServices>
  /** eval: what else its answer depends on (part of a result's fingerprint, so a change asks again). */
  readonly fingerprint: (plan: StrategyPlan, settings: SettingsValue) => Readonly<Record<string, unknown>>
  /** eval's resume: whether a run on disk, by its record, was made as this plan would make it. */
  readonly fits: (record: R, plan: StrategyPlan) => boolean
  /** The calls its step made (judges, refinements), by its record: paid for and listed like the candidates'. */
  readonly calls: (record: R) => ReadonlyArray<CandidateRecord>
  /** What its step did, for the run's summary line and eval's report; undefined: nothing to say (`synthesize`). */
  readonly steps: (record: R) => StepCount | undefined
  /** What eval's report counts its steps in ("rankings counted"); undefined: they are not calls, eval counts none (`self`). */
  readonly stepUnit: string | undefined
}

/** No calls of its own. */
export const noSteps: StrategyPlan["steps"] = { models: [], rounds: 0 }

/** Asks the models named, as they are named, and no other. */
export const askNamed = ({ models }: PlanInput): StrategyPlan => ({ candidates: models, steps: noSteps })

/** A step that leaves the answers as they are. */
export const unchanged = (_started: StartedRun, answered: Arr.NonEmptyReadonlyArray<Answered>): Effect.Effect<Aggregated> =>
  Effect.succeed({ answers: answered, ranking: undefined })

/** What a strategy without calls, refusals or warnings of its own says: spread it, then give the rest. */
export const plain = {
  stepInstructionChars: 0,
  samples: false,
  refusal: () => undefined,
  warning: () => undefined,
  fingerprint: () => ({}),
  fits: () => true,
  calls: () => [],
  steps: () => undefined,
  stepUnit: undefined
} as const satisfies Partial<Strategy<StrategyRecord>>

export const sameList = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string>) =>
  a !== undefined && a.length === b.length && a.every((x, i) => x === b[i])
