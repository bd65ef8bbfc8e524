import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Either, type Option, ParseResult, Schema } from "effect"
import { WholeNumberText } from "../settings/kinds.js"
import type { CommandName } from "../settings/setting.js"
import type { FlagHelp } from "./flagHelp.js"
import { type Named, type SettingsFlagOptions, settingsOptionsFor } from "./settingsOptions.js"

// A command's own options and arguments, each declared once with what `--help` says of it: @effect/cli
// parses them, and help.ts renders the help from the same declarations (with the settings of the table).

export interface Flag<A> {
  readonly option: Options.Options<A>
  readonly help: FlagHelp
}

export interface Positional<A> {
  readonly arg: Args.Args<A>
  readonly help: FlagHelp
}

interface Spec {
  readonly name: string
  readonly alias?: string
  readonly doc: string
}

/** An option with a value: `value` names it in `--help` (`path`, `run-id`). */
interface ValueSpec extends Spec {
  readonly value: string
}

const flagOf = <A>(spec: Spec, option: Options.Options<A>, value: string, notes: ReadonlyArray<string> = []): Flag<A> => ({
  option: (spec.alias === undefined ? option : Options.withAlias(option, spec.alias)).pipe(Options.withDescription(spec.doc)),
  help: {
    names: [...(spec.alias === undefined ? [] : [`-${spec.alias}`]), `--${spec.name}`].join(", "),
    value,
    doc: spec.doc,
    notes,
    takesValue: value !== ""
  }
})

/** A switch: `--json`. */
export const switchFlag = (spec: Spec): Flag<boolean> => flagOf(spec, Options.boolean(spec.name), "")

/** An optional option with a value. */
export const textFlag = (spec: ValueSpec): Flag<Option.Option<string>> =>
  flagOf(spec, Options.text(spec.name).pipe(Options.withPseudoName(spec.value), Options.optional), `<${spec.value}>`)

/** An option with a value and a default. */
export const textFlagOr = (spec: ValueSpec, fallback: string): Flag<string> =>
  flagOf(spec, Options.text(spec.name).pipe(Options.withPseudoName(spec.value), Options.withDefault(fallback)), `<${spec.value}>`, [
    `default: ${fallback}`
  ])

/** An option that may be given any number of times. */
export const repeatedFlag = (spec: ValueSpec): Flag<Array<string>> =>
  flagOf(spec, Options.text(spec.name).pipe(Options.withPseudoName(spec.value), Options.repeated), `<${spec.value}>...`, [
    "repeatable"
  ])

/**
 * A number flag, decoded by `schema` (default: any whole number) with one line naming the flag, the way the
 * settings' number flags say it (`--limit: expected a whole number, got "x"`), not @effect/cli's own words.
 */
const numberOption = (name: string, schema: Schema.Schema<number, string>): Options.Options<number> => {
  const decode = Schema.decodeEither(schema)
  return Options.text(name).pipe(Options.mapEffect((text) =>
    Either.mapLeft(decode(text), (error) => {
      const message = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "invalid"
      return ValidationError.invalidValue(HelpDoc.p(`--${name}: ${message}`))
    })
  ))
}

/** An optional whole number. */
export const integerFlag = (spec: Spec & { readonly value?: string }): Flag<Option.Option<number>> => {
  const value = spec.value ?? "integer"
  return flagOf(spec, numberOption(spec.name, WholeNumberText).pipe(Options.withPseudoName(value), Options.optional), `<${value}>`)
}

/** A whole number with a default, within `bounds` if given. */
export const integerFlagOr = (spec: Spec, fallback: number, bounds: Schema.Schema<number, string> = WholeNumberText): Flag<number> => {
  const checked = numberOption(spec.name, bounds).pipe(Options.withPseudoName("integer"))
  return flagOf(spec, checked.pipe(Options.withDefault(fallback)), "<integer>", [`default: ${fallback}`])
}

/** An optional choice among a few names. */
export const choiceFlag = <const C extends ReadonlyArray<string>>(spec: Spec, choices: C): Flag<Option.Option<C[number]>> =>
  flagOf(spec, Options.choice(spec.name, choices).pipe(Options.optional), `<${choices.join("|")}>`)

const argHelp = (name: string, doc: string, optional: boolean): FlagHelp => ({
  names: optional ? `[${name}]` : `<${name}>`,
  value: "",
  doc,
  notes: [],
  takesValue: false
})

/** A positional argument. */
export const argument = (name: string, doc: string): Positional<string> => ({
  arg: Args.text({ name }).pipe(Args.withDescription(doc)),
  help: argHelp(name, doc, false)
})

/** A positional argument that may be left out. */
export const optionalArgument = (name: string, doc: string): Positional<Option.Option<string>> => ({
  arg: Args.text({ name }).pipe(Args.withDescription(doc), Args.optional),
  help: argHelp(name, doc, true)
})

/** What `--help` and the check for unknown options know of a command. */
export interface CommandHelp {
  /** `ask`, `runs show`. */
  readonly path: string
  /** One line, for the root help. */
  readonly summary: string
  /** More, after the summary in the command's own help. */
  readonly details: string
  readonly args: ReadonlyArray<FlagHelp>
  readonly flags: ReadonlyArray<FlagHelp>
  /** Whose settings' flags it takes: a command of the table, or `all` (`config`). */
  readonly settings: CommandName | "all"
  readonly subcommands: ReadonlyArray<CommandHelp>
}

type OptionsOf<F> = { readonly [K in keyof F]: F[K] extends Flag<infer A> ? Options.Options<A> : never }
type ArgsOf<P> = { readonly [K in keyof P]: P[K] extends Positional<infer A> ? Args.Args<A> : never }

const pick = <T, U>(record: Record<string, T>, f: (t: T) => U) => Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]))

/**
 * A command from its declarations: the @effect/cli command (its own options and arguments, and under
 * `settings` the flags of the settings it takes) and its help.
 */
export const defineCommand = <
  const Name extends string,
  const P extends Record<string, Positional<unknown>>,
  const F extends Record<string, Flag<unknown>>
>(name: Name, def: {
  readonly path?: string
  readonly summary: string
  readonly details?: string
  readonly args: P
  readonly flags: F
  readonly settings: CommandName | "all"
}) => {
  const own = {
    ...(pick(def.args, (p) => p.arg) as ArgsOf<P>),
    ...(pick(def.flags, (f) => f.option) as OptionsOf<F>)
  }
  const help: CommandHelp = {
    path: def.path ?? name,
    summary: def.summary,
    details: def.details ?? "",
    args: Object.values(def.args).map((p) => p.help),
    flags: Object.values(def.flags).map((f) => f.help),
    settings: def.settings,
    subcommands: []
  }
  /** The @effect/cli command, with the settings options `named` names (all without it: `--completions`). */
  const commandFor = (named?: Named) =>
    Command.make(name, { ...own, settings: settingsOptionsFor(def.settings, named) satisfies SettingsFlagOptions }).pipe(
      Command.withDescription(def.summary)
    )
  return { help, commandFor }
}

/** What a command's handler is given: its parsed options, arguments and settings flags. */
export type ParsedArgs<C> = C extends { readonly commandFor: (named?: Named) => Command.Command<infer _N, infer _R, infer _E, infer A> } ? A
  : never
