import type { Config, Option, Redacted } from "effect"
import type { ModelOptions } from "../domain/modelOptions.js"
import type { SettingKey, SettingsTable } from "./table.js"

type ValueOf<S> = S extends { readonly config: (...args: never) => Config.Config<infer V> } ? V : never

/** One field per entry of the table, as the program reads it. */
type TableValues = { readonly [K in SettingKey as SettingsTable[K]["field"]]: ValueOf<SettingsTable[K]> }

/** What one preset of the config file sets: some of the settings marked `preset`, converted like the rest. */
export type PresetValues = Partial<TableValues>

/** The effective settings of this process: one field per entry of the table, plus the key and the config file. */
export type SettingsValue =
  & TableValues
  & {
    readonly apiKey: Option.Option<Redacted.Redacted<string>>
    /** Where the config file came from, when one was read. */
    readonly configFile: Option.Option<string>
    /** The options of the models the config file gives as objects, by id (flags and environment give ids only). */
    readonly modelOptions: Readonly<Record<string, ModelOptions>>
    /** The config file's presets by name (the active one, if any, is already applied; MCP calls may pick another). */
    readonly presets: Readonly<Record<string, PresetValues>>
  }

/** Raw values as the user wrote them (a repeated flag is joined with commas). */
export type RawSettings = Partial<Record<SettingKey, string>>

/** Where a setting's value came from, so that an error names it the way the user wrote it. */
export type SettingSource = "flag" | "env" | "preset" | "file" | "default"
