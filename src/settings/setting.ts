import { Config, Option, Schema } from "effect"
import * as path from "node:path"
import type { Bounds, Kind } from "./kinds.js"

/** What a default or a conversion may depend on: the environment the program was started with. */
export interface SettingContext {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly home: string
  /** The directory a relative path is resolved against: the config file's own, when the value came from it. */
  readonly baseDir: string
}

/**
 * The CLI commands that can take a setting's flag (`runs show` is the subcommand). Each topic of ./table/
 * names its commands; a setting may narrow them with its own `commands`. `config` takes every flag, and the
 * environment and the config file reach every command whatever its flags.
 */
export type CommandName = "ask" | "batch" | "serve" | "models" | "runs" | "runs show" | "resynth" | "eval"

/** A topic of the table (a file of ./table/): its title in `--help` and the commands that take its settings. */
export interface Topic {
  readonly title: string
  readonly commands: ReadonlyArray<CommandName>
  /** Commands that take its flags too, but whose `--help` only names them (`ask`'s is held to 120 lines). */
  readonly namedIn?: ReadonlyArray<CommandName>
}

/**
 * Present when one call may set the setting for itself: an MCP tool's argument, a `batch` line, an eval
 * system. The tools' input schemas and the call's patch of `Settings` (see ../perCall.ts) both come from it.
 */
export interface McpOverride<A = unknown> {
  /** What the argument is, in a tool's input schema: a few words (the tool list is in every conversation). */
  readonly description?: string
  /** A tighter upper bound for one call than for the server's own setting (a number). */
  readonly max?: number
  /** What a call may give, when it is not the kind's `plain` (model ids checked as ids, at least one). */
  readonly schema?: Schema.Schema<A>
}

/** Any entry's mark, whatever its value's type. */
export type AnyMcpOverride = Omit<McpOverride, "schema"> & { readonly schema?: Schema.Schema.AnyNoContext }

interface Spec<F extends string, A, V> {
  /** The name of the value in `SettingsValue`, `config` and `get_config` (`timeoutMs` for `timeout`). */
  readonly field: F
  readonly kind: Kind<A>
  /** The long flag without its dashes. */
  readonly flag: string
  readonly alias?: string
  readonly env: string
  /** One line, for `--help` and the README. */
  readonly doc: string
  /** The default as the README and `--help` say it. */
  readonly defaultDoc: string
  /** Turns the value as written (seconds, `~/x`) into the value the program uses (milliseconds, an absolute path). */
  readonly convert?: (a: A, ctx: SettingContext) => V
  /** A preset of the config file (`presets: { NAME: { … } }`) may carry it: it belongs to a panel, not to the process. */
  readonly preset?: boolean
  /** The commands that take its flag, when fewer than its topic's. */
  readonly commands?: ReadonlyArray<CommandName>
  /** Commands that take its flag too, but whose `--help` only names it (as {@link Topic.namedIn}). */
  readonly namedIn?: ReadonlyArray<CommandName>
  /** The value its flag stands for when given alone (`--cache` = `--cache 300`); the flag's value is then a whole number. */
  readonly bare?: string
}

/** One setting: everything the loader, the CLI, `config`, `get_config`, MCP and the README derive from. */
export interface Setting<F extends string, A, V, Value> extends Spec<F, A, V> {
  readonly optional: boolean
  /** Reads the setting under `key` from the Config provider the loader builds. */
  readonly config: (key: string, ctx: SettingContext) => Config.Config<Value>
  /** Its value when nothing sets it: what `config` reads then, without a read (see ./load.ts). */
  readonly unset: (ctx: SettingContext) => Value
}

/** Any entry of the table, whatever its types: what the code that walks the whole table may rely on. */
export interface AnySetting {
  readonly field: string
  readonly flag: string
  readonly alias?: string
  readonly env: string
  readonly doc: string
  readonly defaultDoc: string
  readonly optional: boolean
  readonly preset?: boolean
  readonly commands?: ReadonlyArray<CommandName>
  readonly namedIn?: ReadonlyArray<CommandName>
  readonly bare?: string
  /** How the value as written becomes the value used: `--help` names seconds and paths by it. */
  readonly convert?: (a: never, ctx: SettingContext) => unknown
  readonly mcp?: AnyMcpOverride
  readonly kind: {
    readonly flag: Kind<unknown>["flag"]
    readonly file: Schema.Schema.AnyNoContext
    readonly plain: Schema.Schema.AnyNoContext
    readonly json: Schema.Schema.AnyNoContext
    readonly bounds?: Bounds
  }
  readonly config: (key: string, ctx: SettingContext) => Config.Config<unknown>
  readonly unset: (ctx: SettingContext) => unknown
}

type Default<A> = { readonly default: A | ((ctx: SettingContext) => A) }
type Converted<A, V> = { readonly convert: (a: A, ctx: SettingContext) => V }

const buildWithDefault = <F extends string, A, V>(spec: Spec<F, A, V> & Default<A> & Converted<A, V>): Setting<F, A, V, V> => {
  const unset = (ctx: SettingContext) => spec.convert(isComputed(spec.default) ? spec.default(ctx) : spec.default, ctx)
  return {
    ...spec,
    optional: false,
    config: (key, ctx) =>
      Schema.Config(key, spec.kind.text).pipe(
        Config.option,
        Config.map((value) => Option.isSome(value) ? spec.convert(value.value, ctx) : unset(ctx))
      ),
    unset
  }
}

const isComputed = <A>(d: A | ((ctx: SettingContext) => A)): d is (ctx: SettingContext) => A => typeof d === "function"

/** A setting that always has a value: `default` when nothing sets it. */
export function withDefault<const F extends string, A>(spec: Spec<F, A, A> & Default<A>): Setting<F, A, A, A>
export function withDefault<const F extends string, A, V>(spec: Spec<F, A, V> & Default<A> & Converted<A, V>): Setting<F, A, V, V>
export function withDefault<const F extends string, A, V>(
  spec: Spec<F, A, V> & Default<A>
): Setting<F, A, V, V> | Setting<F, A, A, A> {
  return spec.convert === undefined
    ? buildWithDefault({ ...spec, convert: (a: A) => a })
    : buildWithDefault({ ...spec, convert: spec.convert })
}

const buildOptional = <F extends string, A, V>(spec: Spec<F, A, V> & Converted<A, V>): Setting<F, A, V, Option.Option<V>> => ({
  ...spec,
  optional: true,
  config: (key, ctx) => Schema.Config(key, spec.kind.text).pipe(Config.option, Config.map(Option.map((a) => spec.convert(a, ctx)))),
  unset: () => Option.none()
})

/** A setting that may be unset (`Option.none()`). */
export function optional<const F extends string, A>(spec: Spec<F, A, A>): Setting<F, A, A, Option.Option<A>>
export function optional<const F extends string, A, V>(spec: Spec<F, A, V> & Converted<A, V>): Setting<F, A, V, Option.Option<V>>
export function optional<const F extends string, A, V>(
  spec: Spec<F, A, V>
): Setting<F, A, V, Option.Option<V>> | Setting<F, A, A, Option.Option<A>> {
  return spec.convert === undefined
    ? buildOptional({ ...spec, convert: (a: A) => a })
    : buildOptional({ ...spec, convert: spec.convert })
}

type PlainOf<S> = S extends { readonly kind: { readonly plain: Schema.Schema<infer A> } } ? A : never

/** Lets one call set the setting for itself (an MCP argument, a `batch` line, an eval system): see ../perCall.ts. */
export const perCall = <S extends { readonly kind: { readonly plain: Schema.Schema.AnyNoContext } }>(
  setting: S,
  mcp: McpOverride<PlainOf<S>>
): S & { readonly mcp: McpOverride<PlainOf<S>> } => ({ ...setting, mcp })

// --- Conversions shared by several settings ---

export const secondsToMs = (seconds: number): number => Math.round(seconds * 1000)

export const expandHome = (p: string, home: string): string => p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p

/** `~` expanded, then absolute: relative to the config file's directory when written there, else the working directory. */
export const absolutePath = (p: string, ctx: SettingContext): string => path.resolve(ctx.baseDir, expandHome(p, ctx.home))
