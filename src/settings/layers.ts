import { ConfigError, ConfigProvider, Effect, HashSet } from "effect"
import * as PathPatch from "effect/ConfigProviderPathPatch"
import * as path from "node:path"
import { SettingsError } from "../domain/errors.js"
import { firstConfigProblem } from "./configProblem.js"
import type { SettingContext } from "./setting.js"
import { type SettingKey, settingKeys, settingsTable } from "./table.js"
import type { RawSettings, SettingSource } from "./values.js"

/** Where settings come from, highest first: what the loader reads them through. */
export interface Layers {
  readonly flags: RawSettings
  readonly env: RawSettings
  /** The active preset's values, empty without one. */
  readonly preset: RawSettings
  readonly file: RawSettings
  /** A command's own defaults in place of the table's. */
  readonly defaults: RawSettings
  readonly apiKey: string | undefined
  readonly presetName: string | undefined
  readonly configFile: string | undefined
  readonly environment: Readonly<Record<string, string | undefined>>
  readonly home: string
  /** Where relative paths given by flag or environment start from. */
  readonly cwd: string
}

/** Where a setting's value was written, as the user wrote it: the flag, the variable, or the key in the config file. */
export const whereSet = (
  key: SettingKey,
  source: SettingSource,
  file: { readonly configFile: string | undefined; readonly presetName?: string | undefined }
): string => {
  switch (source) {
    case "flag":
      return `--${settingsTable[key].flag}`
    case "env":
      return settingsTable[key].env
    case "preset":
      return `presets.${file.presetName}.${key} (in ${file.configFile})`
    case "file":
      return `${key} (in ${file.configFile})`
    default:
      return key
  }
}

/**
 * `ConfigProvider.fromMap` over setting names (no nesting, no indices), the same values and errors, without its
 * cost: fromMap looks a name up by failing on an `Option.none()`, which builds an Error with its stack for every
 * setting nobody set (most of them, on every load).
 */
const fromValues = (values: ReadonlyMap<string, string>): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromFlat(ConfigProvider.makeFlat({
    load: (path, primitive, split) => {
      const name = path.join(".")
      const text = values.get(name)
      if (text === undefined) return Effect.fail(ConfigError.MissingData([...path], `Expected ${name} to exist in the provided map`))
      const parsed = split
        ? Effect.forEach(text.split(/\s*,\s*/), (part) => primitive.parse(part.trim()))
        : Effect.map(primitive.parse(text), (value) => [value])
      return Effect.mapError(parsed, ConfigError.prefixed([...path]))
    },
    enumerateChildren: (path) =>
      Effect.sync(() =>
        HashSet.fromIterable(
          [...values.keys()].map((key) => key.split(".")).filter((key) => path.every((part, i) => key[i] === part)).flatMap((key) =>
            key.slice(path.length, path.length + 1)
          )
        )
      ),
    patch: PathPatch.empty
  }))

const entriesOf = (raw: RawSettings) => Object.entries(raw).filter((e): e is [string, string] => e[1] !== undefined)

/**
 * The layers settled: each setting's source, the Config provider that reads them in order (flag > environment >
 * preset > config file > default), each setting's context, and a refusal that names where a bad value came from.
 */
export const settle = (layers: Layers) => {
  const sources = {} as Record<SettingKey, SettingSource>
  for (const key of settingKeys) {
    sources[key] = layers.flags[key] !== undefined
      ? "flag"
      : layers.env[key] !== undefined
      ? "env"
      : layers.preset[key] !== undefined
      ? "preset"
      : layers.file[key] !== undefined
      ? "file"
      : "default"
  }
  const describe = (key: string): string => key in settingsTable ? whereSet(key as SettingKey, sources[key as SettingKey], layers) : key
  const fileDir = layers.configFile === undefined ? layers.cwd : path.dirname(layers.configFile)
  // One map, a higher layer's entry after a lower one's, rather than a provider per layer falling back on missing
  // data: the same values, but every setting a layer lacks was a failure there, each building an Error with its
  // stack (three quarters of a load's CPU).
  const values = new Map([
    ...entriesOf(layers.defaults),
    ...entriesOf(layers.file),
    ...entriesOf(layers.preset),
    ...entriesOf(layers.env),
    ...(layers.apiKey ? [["apiKey", layers.apiKey] as const] : []),
    ...entriesOf(layers.flags)
  ])
  return {
    sources,
    describe,
    /** Relative paths from the config file (or one of its presets) are relative to the file's directory. */
    contextOf: (key: SettingKey): SettingContext => ({
      env: layers.environment,
      home: layers.home,
      baseDir: sources[key] === "file" || sources[key] === "preset" ? fileDir : layers.cwd
    }),
    provider: fromValues(values),
    /** Whether any layer gives the setting a value: one none gives is its table default, read without the provider. */
    isSet: (key: SettingKey): boolean => values.has(key),
    refusal: (error: ConfigError.ConfigError) => {
      const { key, message } = firstConfigProblem(error)
      return new SettingsError({ setting: describe(key), message: `${describe(key)}: ${message}` })
    }
  }
}
