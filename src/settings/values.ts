import type { Config, Option, Redacted } from "effect"
import type { ModelOptions } from "../domain/modelOptions.js"
import type { SettingKey, SettingsTable } from "./table.js"

type ValueOf<S> = S extends { readonly config: (...args: never) => Config.Config<infer V> } ? V : never

/** The effective settings of this process: one field per entry of the table, plus the key and the config file. */
export type SettingsValue =
  & { readonly [K in SettingKey as SettingsTable[K]["field"]]: ValueOf<SettingsTable[K]> }
  & {
    readonly apiKey: Option.Option<Redacted.Redacted<string>>
    /** Where the config file came from, when one was read. */
    readonly configFile: Option.Option<string>
    /** The options of the models the config file gives as objects, by id (flags and environment give ids only). */
    readonly modelOptions: Readonly<Record<string, ModelOptions>>
  }

/** Raw values as the user wrote them (a repeated flag is joined with commas). */
export type RawSettings = Partial<Record<SettingKey, string>>

/** Where a setting's value came from, so that an error names it the way the user wrote it. */
export type SettingSource = "flag" | "env" | "file" | "default"
