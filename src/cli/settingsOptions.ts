import { Options } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { SettingsError } from "../domain/errors.js"
import { isStrategyName, strategiesDescribed, unknownStrategy } from "../programs/strategies/registry.js"
import { ProcessIo } from "../services/processIo.js"
import { Settings } from "../services/settings.js"
import { type LoadInput, loadSettings, type SettingChecks } from "../settings/load.js"
import { defaultText, type DocEndings, docOf, envText, helpText, valueName } from "../settings/readme.js"
import type { AnySetting, CommandName } from "../settings/setting.js"
import { type SettingKey, settingKeys, settingsTable, takesSetting } from "../settings/table.js"
import type { RawSettings } from "../settings/values.js"
import type { FlagHelp } from "./flagHelp.js"

// The settings flags of each command, derived from the settings table: a command takes the flags of the
// settings it uses (the table says which), and the environment and the config file reach every setting
// whatever the command. Values stay text here: the loader decodes flags, environment and config file with
// one set of schemas and messages.

/** What one settings flag parses to: absent, its text, a switch given, or the values of a repeated flag. */
type FlagValue = Option.Option<string | boolean | ReadonlyArray<string>>

/** `--log-level` is one of @effect/cli's built-in options: `main.ts` takes it off the command line (below). */
type FlagKey = Exclude<SettingKey, "logLevel">

/**
 * What the loader cannot check below the programs: a strategy's name, against the registry (the one list of
 * strategies). Every command's settings are read with it (`rawFromFlags`), `serve`'s too.
 */
const settingChecks: SettingChecks = { strategy: (name) => (isStrategyName(name) ? undefined : unknownStrategy(name)) }

/** What the table's docs cannot say below the programs, by setting: the strategies' names, from the registry. */
export const docEndings: DocEndings = { strategy: strategiesDescribed }

const optionOf = (s: AnySetting): Options.Options<FlagValue> => {
  const named = (o: Options.Options<string>) => (s.alias === undefined ? o : Options.withAlias(o, s.alias))
  const described = <A>(o: Options.Options<A>) => Options.withDescription(o, helpText(s, docEndings))
  switch (s.kind.flag) {
    case "on":
    case "off":
      return Options.boolean(s.flag).pipe(described, Options.optional)
    case "list":
      return named(Options.text(s.flag)).pipe(described, Options.repeated, Options.optional)
    case "integer":
    case "number":
    case "text":
      return named(Options.text(s.flag)).pipe(Options.withPseudoName(valueName(s) ?? s.kind.flag), described, Options.optional)
  }
}

const flagKeys = Object.keys(settingsTable).filter((key): key is FlagKey => key !== "logLevel")

/** The settings a command takes a flag for, in the table's order (`config` takes them all). */
export const settingKeysOf = (command: CommandName | "all"): ReadonlyArray<SettingKey> =>
  settingKeys.filter((key) => command === "all" || takesSetting(command, key))

const configHelp = "A JSON config file; flags and environment win over it"

/** `--config`: every command reads the settings, so every command takes it. */
export const configFlagHelp: FlagHelp = {
  names: "--config",
  value: "<path>",
  doc: configHelp,
  notes: ["default: ~/.config/parallel-llm-mcp/config.json if there", "env: PARALLEL_LLM_CONFIG"],
  takesValue: true
}

/** A settings flag as `--help` shows it. */
export const settingFlagHelp = (s: AnySetting): FlagHelp => {
  const value = valueName(s)
  const shown = value === undefined ? "" : `<${value}>${s.kind.flag === "list" ? "..." : ""}`
  return {
    names: [...(s.alias === undefined ? [] : [`-${s.alias}`]), `--${s.flag}`].join(", "),
    value: s.bare === undefined ? shown : `[${shown}]`,
    doc: docOf(s, docEndings),
    notes: [...(s.kind.flag === "list" ? ["repeatable"] : []), `${defaultText(s)}; ${envText(s)}`],
    takesValue: value !== undefined
  }
}

/** The options of a command's settings flags (and `--config`), by setting key. */
export type SettingsFlagOptions = Readonly<Record<string, Options.Options<FlagValue>>>

/** Whether a command line names an option by any of `names` (`--name`, `-a`). */
export type Named = (names: ReadonlyArray<string>) => boolean

/**
 * The options `words` name, as @effect/cli reads them (`--name`, `--name=value`, `-a`, in any case, `-abc` as `-a`
 * `-b` `-c`), wherever they stand: a value or a prompt that looks like an option only adds one to parse.
 */
export const namedIn = (words: ReadonlyArray<string>): Named => {
  const said = new Set(words.flatMap((word) => {
    const w = word.trim().toLowerCase()
    return w.startsWith("--") ? [w.split("=")[0]!] : w.startsWith("-") ? [...w.slice(1)].map((c) => `-${c}`) : []
  }))
  return (names) => names.some((name) => said.has(name.toLowerCase()))
}

/**
 * A command's settings options: those `named` names (every one without `named`). @effect/cli matches each
 * declared option against every word, and one not given costs it a failure with a help document before it falls
 * back to none: about 2,500 of the ~4,200 Effect operations of parsing an `ask`, for the ~40 settings flags it
 * takes. A setting without its option is read from the environment and the config file, as one not given is.
 */
export const settingsOptionsFor = (command: CommandName | "all", named?: Named): SettingsFlagOptions => {
  const wanted = (names: ReadonlyArray<string>) => named === undefined || named(names)
  return {
    ...Object.fromEntries(
      settingKeysOf(command).flatMap((key) => {
        const s: AnySetting = settingsTable[key]
        const names = [`--${s.flag}`, ...(s.alias === undefined ? [] : [`-${s.alias}`])]
        return key === "logLevel" || !wanted(names) ? [] : [[key, optionOf(s)]]
      })
    ),
    ...(wanted(["--config"])
      ? { config: Options.text("config").pipe(Options.withDescription(`${configHelp}. [env PARALLEL_LLM_CONFIG]`), Options.optional) }
      : {})
  }
}

/** What a command's settings flags parse to (`config`: the `--config` file). */
export type SettingsFlags = Readonly<Record<string, FlagValue>>

/**
 * `--log-level` is one of @effect/cli's built-in option names, so `main.ts` takes it off the command line
 * before parsing; it is read here, from argv, so that it still outranks the environment and the config file.
 */
export const logLevelFromArgv = (argv: ReadonlyArray<string>): string | undefined => {
  let found: string | undefined
  argv.forEach((arg, i) => {
    if (arg === "--log-level" && argv[i + 1] !== undefined) found = argv[i + 1]
    else if (arg.startsWith("--log-level=")) found = arg.slice("--log-level=".length)
  })
  return found
}

/** The flags that may be given without their value (`--cache`), with the value each then stands for. */
const bareValues = new Map<string, string>(
  settingKeys.flatMap((key) => {
    const s: AnySetting = settingsTable[key]
    return s.bare === undefined ? [] : [[`--${s.flag}`, s.bare] as const]
  })
)

/**
 * The command line with each flag that may go without its value given one (`--cache` → `--cache=300`):
 * @effect/cli has no option whose value is optional. A flag's value is the next word only when that is a
 * whole number (`--cache 600`), so that `ask --cache "a prompt"` keeps its prompt. Words after `--` are kept.
 */
export const withBareValues = (words: ReadonlyArray<string>): Array<string> => {
  const end = words.indexOf("--")
  return words.map((word, i) => {
    const value = bareValues.get(word)
    if (value === undefined || (end !== -1 && i > end)) return word
    return /^\d+$/.test(words[i + 1] ?? "") ? word : `${word}=${value}`
  })
}

/**
 * Whether a repeatable flag was given an empty value: @effect/cli drops those silently (`-m ''` would
 * mean "the default models"), so the command line is looked at directly, up to a `--`.
 */
const givenEmpty = (argv: ReadonlyArray<string>, s: AnySetting): boolean => {
  const names = [`--${s.flag}`, ...(s.alias !== undefined ? [`-${s.alias}`] : [])]
  const end = argv.indexOf("--")
  return argv.slice(0, end === -1 ? argv.length : end).some((arg, i, args) =>
    names.includes(arg) && args[i + 1] !== undefined && args[i + 1]!.trim() === ""
  )
}

/** The flags the user gave, as raw text for the loader (with the checks above the settings). An empty value is refused, never dropped. */
export const rawFromFlags = Effect.fn("rawFromFlags")(function*(parsed: SettingsFlags) {
  const flags: RawSettings = {}
  const { argv } = yield* ProcessIo
  const logLevel = logLevelFromArgv(argv)
  if (logLevel !== undefined) flags.logLevel = logLevel
  for (const key of flagKeys) {
    const entry = settingsTable[key]
    const value = parsed[key]
    // A setting the command takes no flag for comes from the environment or the config file only.
    if (value === undefined) continue
    if (entry.kind.flag === "list" && givenEmpty(argv, entry)) {
      return yield* new SettingsError({ setting: `--${entry.flag}`, message: `--${entry.flag}: must not be empty` })
    }
    if (Option.isNone(value)) continue
    const given = value.value
    if (typeof given === "boolean") {
      if (given) flags[key] = entry.kind.flag === "off" ? "false" : "true"
    } else if (typeof given === "string") {
      flags[key] = given
    } else if (given.length > 0) {
      flags[key] = given.join(",")
    }
  }
  const config = parsed.config ?? Option.none()
  return {
    flags,
    configFlag: Option.getOrUndefined(Option.filter(config, (c): c is string => typeof c === "string")),
    checks: settingChecks
  }
})

export interface SettingsOptions {
  /** Commands that make no paid call (config, models, runs) work without a key. */
  readonly requireApiKey?: boolean
  /** The command's own defaults in place of the table's. */
  readonly defaults?: LoadInput["defaults"]
}

/** A command's settings, their sources and the raw flags, from its parsed options, the environment and the config file. */
export const settingsFromFlags = (parsed: SettingsFlags, options: SettingsOptions = {}) =>
  Effect.flatMap(
    Effect.all([rawFromFlags(parsed), ProcessIo]),
    ([raw, io]) =>
      loadSettings({ ...raw, env: io.env, home: io.home, cwd: io.cwd, ...options }).pipe(
        Effect.map((loaded) => ({ ...loaded, ...raw }))
      )
  )

/** The Settings service of a command, built from its parsed flags: what `main.ts` provides to it. */
export const settingsLayer = (
  parsed: SettingsFlags,
  options: SettingsOptions = {}
): Layer.Layer<Settings, SettingsError, FileSystem.FileSystem> =>
  Settings.fromInput(
    Effect.map(
      Effect.all([rawFromFlags(parsed), ProcessIo]),
      ([raw, io]) => ({ ...raw, env: io.env, home: io.home, cwd: io.cwd, ...options })
    )
  )

/** Whether `-m`/`--model` was given on the command line: the models named there are the run's own (as an MCP call's are). */
export const modelsGiven = (flags: { readonly [key: string]: FlagValue | undefined }): boolean => {
  const given = flags["models"]
  return given !== undefined && Option.exists(given, (value) => Array.isArray(value) && value.length > 0)
}
