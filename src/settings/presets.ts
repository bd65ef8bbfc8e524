import { Config, ConfigProvider, Effect, Either, Option, Schema } from "effect"
import { SettingsError } from "../domain/errors.js"
import { firstConfigProblem } from "./configProblem.js"
import { PRESET_NAME } from "./kinds.js"
import type { AnySetting, SettingContext } from "./setting.js"
import { type SettingKey, settingKeys, settingsTable } from "./table.js"
import type { PresetValues, RawSettings, SettingsValue } from "./values.js"

// Presets: named panels in the config file (`presets: { NAME: { models, synthesizer, … } }`). A preset holds
// only settings the table marks `preset`, written as the file's top level writes them and decoded by the same
// kinds; the active one is an overlay of the file (it beats the file's own values, flags and environment beat it).

const entryOf = (key: SettingKey): AnySetting => settingsTable[key]

/** The settings a preset may carry: the table's entries marked `preset`, in the table's order. */
export const presetKeys: ReadonlyArray<SettingKey> = settingKeys.filter((key) => entryOf(key).preset === true)

/** What one preset may hold in the config file: any other key is refused. */
const PresetInFile = Schema.Struct(
  Object.fromEntries(presetKeys.map((key) => [key, Schema.optional(entryOf(key).kind.file)]))
)

/** The config file's `presets`, by name. */
export const PresetsInFile = Schema.Record({ key: Schema.String, value: PresetInFile })

/**
 * Every preset of the file, converted like the settings themselves (seconds to milliseconds, `none`), so that a
 * bad value in any of them is refused when the file is read, naming the preset and the field.
 */
export const decodePresets = Effect.fn("Settings.decodePresets")(function*(
  raw: Readonly<Record<string, RawSettings>>,
  ctx: SettingContext,
  file: string
) {
  const presets: Record<string, PresetValues> = {}
  for (const [name, values] of Object.entries(raw)) {
    if (!PRESET_NAME.test(name)) {
      return yield* new SettingsError({
        setting: "presets",
        message: `presets (in ${file}): ${JSON.stringify(name)} is not a preset name (letters, digits, '.', '_', '-')`
      })
    }
    const keys = presetKeys.filter((key) => values[key] !== undefined)
    const config = Config.all(Object.fromEntries(keys.map((key) => [entryOf(key).field, entryOf(key).config(key, ctx)])))
    const converted = yield* config.pipe(
      Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map(keys.map((key) => [key, values[key] ?? ""] as const)))
      ),
      Effect.mapError((error) => {
        const { key, message } = firstConfigProblem(error)
        const where = `presets.${name}.${key} (in ${file})`
        return new SettingsError({ setting: where, message: `${where}: ${message}` })
      })
    )
    presets[name] = converted as PresetValues
  }
  return presets
})

/** The refusal of a preset name the config file does not define: it names the ones it does. */
export const unknownPresetMessage = (name: string, known: ReadonlyArray<string>, file: Option.Option<string>): string =>
  `unknown preset ${JSON.stringify(name)}: ` + (known.length > 0
    ? `the presets are ${known.join(", ")}`
    : Option.match(file, {
      onNone: () => "no config file was read, so there are none (see `presets` in the README)",
      onSome: (f) => `${f} defines none`
    }))

/**
 * One MCP call's preset over the server's settings: the preset's values replace the server's, and the call's
 * own arguments (applied later, by the run) beat both.
 */
export const applyPreset = (settings: SettingsValue, name: string): Either.Either<SettingsValue, string> => {
  const preset = Object.hasOwn(settings.presets, name) ? settings.presets[name] : undefined
  return preset === undefined
    ? Either.left(unknownPresetMessage(name, Object.keys(settings.presets), settings.configFile))
    : Either.right({ ...settings, ...preset, preset: Option.some(name) })
}

/** A preset's panel as `models` and `list_models` show it: what a run with it would ask. */
export const presetPanels = (settings: SettingsValue): ReadonlyArray<{ readonly name: string; readonly models: ReadonlyArray<string> }> =>
  Object.entries(settings.presets).map(([name, preset]) => ({ name, models: preset.models ?? settings.models }))
