import { Option, Schema } from "effect"
import { redactedKey } from "./load.js"
import { settingKeys, settingsTable, type SettingKey } from "./table.js"
import type { SettingSource, SettingsValue } from "./values.js"

const valueOf = (settings: SettingsValue, key: SettingKey): unknown => {
  const value: unknown = (settings as Readonly<Record<string, unknown>>)[settingsTable[key].field]
  return Option.isOption(value) ? Option.getOrNull(value) : value
}

/** The settings as plain JSON, the key redacted: what `config --json` and `get_config` show, in the table's order. */
export const describeSettings = (settings: SettingsValue): Readonly<Record<string, unknown>> & { readonly apiKey: string } => {
  const [first, ...rest] = settingKeys.map((key) => [settingsTable[key].field, valueOf(settings, key)] as const)
  return {
    ...Object.fromEntries(first ? [first] : []),
    apiKey: redactedKey(settings),
    ...Object.fromEntries(rest),
    configFile: Option.getOrNull(settings.configFile)
  }
}

/** The schema of `describeSettings`'s output: `get_config`'s structured result (the key only ever as a word). */
export const SettingsDescription = Schema.Struct({
  apiKey: Schema.Literal("<redacted>", "<not set>").annotations({ description: "Whether a key is set; never the key." }),
  ...Object.fromEntries(
    settingKeys.map((key) => {
      const entry = settingsTable[key]
      const json = entry.kind.json.annotations({ description: entry.doc })
      return [entry.field, entry.optional ? Schema.NullOr(json) : json]
    })
  ),
  configFile: Schema.NullOr(Schema.String)
})

export interface ConfigRow {
  readonly setting: string
  readonly value: unknown
  readonly source: string
}

/** One row per setting for `parallel-llm config`: its value and where it came from. */
export const configRows = (
  settings: SettingsValue,
  sources: Readonly<Record<SettingKey, SettingSource>>,
  configFileSource: string
): ReadonlyArray<ConfigRow> => {
  const sourceOf = (key: SettingKey): string => {
    switch (sources[key]) {
      case "flag":
        return `flag --${settingsTable[key].flag}`
      case "env":
        return `env ${settingsTable[key].env}`
      case "file":
        return `file ${Option.getOrElse(settings.configFile, () => "?")}`
      default:
        return "default"
    }
  }
  const keyOfField = new Map(settingKeys.map((key) => [settingsTable[key].field as string, key]))
  return Object.entries(describeSettings(settings)).map(([field, value]) => {
    const key = keyOfField.get(field)
    const source = field === "apiKey"
      ? (Option.isSome(settings.apiKey) ? "env OPENROUTER_API_KEY" : "-")
      : field === "configFile"
      ? configFileSource
      : key !== undefined
      ? sourceOf(key)
      : "-"
    return { setting: field, value, source }
  })
}
