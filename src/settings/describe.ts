import { Option, Schema } from "effect"
import { ModelOptions } from "../domain/modelOptions.js"
import { makeRedact, type Redact } from "../domain/redact.js"
import { type SettingKey, settingKeys, settingsTable } from "./table.js"
import type { SettingSource, SettingsValue } from "./values.js"

/**
 * The schema of `describeSettings`'s output, `get_config`'s structured result: the key only ever as a word,
 * every other field one of the table's (a number, a string, a list of model ids, a switch, or null when unset), and
 * `modelOptions`, the per-model options of the config file by model id.
 */
export const SettingsDescription = Schema.Struct(
  {
    apiKey: Schema.Literal("<redacted>", "<not set>").annotations({ description: "Whether a key is set; never the key." }),
    configFile: Schema.NullOr(Schema.String)
  },
  Schema.Record({
    key: Schema.String,
    value: Schema.Union(
      Schema.Number,
      Schema.String,
      Schema.Boolean,
      Schema.Array(Schema.String),
      Schema.Null,
      // modelOptions: the options of the models the config file gives as objects, by id.
      Schema.Record({ key: Schema.String, value: ModelOptions })
    )
  })
)
export type SettingsDescription = typeof SettingsDescription.Type

const describeValue = (value: unknown, redact: Redact): number | string | boolean | ReadonlyArray<string> | null => {
  const plain = Option.isOption(value) ? Option.getOrNull(value) : value
  return typeof plain === "string"
    ? redact(plain)
    : typeof plain === "number" || typeof plain === "boolean" || plain === null
    ? plain
    : Array.isArray(plain) && plain.every((item) => typeof item === "string")
    ? plain.map(redact)
    : redact(String(plain))
}

/** The settings as plain JSON, the key redacted: what `config --json` and `get_config` show, in the table's order. */
export const describeSettings = (settings: SettingsValue): SettingsDescription => {
  // The key never shows, even where it was pasted by mistake (a title, a path).
  const redact = makeRedact(settings.apiKey)
  const fields = settingKeys.map((key) => {
    const field = settingsTable[key].field
    return [field, describeValue((settings as Readonly<Record<string, unknown>>)[field], redact)] as const
  })
  const [first, ...rest] = fields
  return {
    ...Object.fromEntries(first ? [first] : []),
    apiKey: Option.isSome(settings.apiKey) ? "<redacted>" : "<not set>",
    ...Object.fromEntries(rest),
    modelOptions: settings.modelOptions,
    configFile: Option.map(settings.configFile, redact).pipe(Option.getOrNull)
  }
}

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
      case "preset":
        return `preset ${Option.getOrElse(settings.preset, () => "?")} (file ${Option.getOrElse(settings.configFile, () => "?")})`
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
      : field === "modelOptions"
      ? (Object.keys(settings.modelOptions).length > 0 ? `file ${Option.getOrElse(settings.configFile, () => "?")}` : "-")
      : key !== undefined
      ? sourceOf(key)
      : "-"
    return { setting: field, value, source }
  })
}
