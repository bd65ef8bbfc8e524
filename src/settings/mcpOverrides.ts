import { Schema } from "effect"
import { boundedNumber } from "./kinds.js"
import type { AnySetting, McpOverride } from "./setting.js"
import { type SettingKey, settingKeys, type SettingsTable, settingsTable } from "./table.js"

/** The settings a single MCP call may override: the table's entries made with `perCall`. */
export type McpOverrideKey = { [K in SettingKey]: SettingsTable[K] extends { readonly mcp: McpOverride } ? K : never }[SettingKey]

const isOverridable = (key: SettingKey): key is McpOverrideKey => "mcp" in settingsTable[key]

const overrideSchema = (entry: AnySetting): Schema.Schema<number> => {
  const bounds = entry.kind.bounds ?? { min: -Infinity, max: Infinity, integer: false }
  return boundedNumber(bounds.min, Math.min(bounds.max, entry.mcp?.max ?? bounds.max), bounds.integer)
    .annotations({ title: entry.mcp?.title, description: entry.mcp?.description })
}

type OverrideFields = { readonly [K in McpOverrideKey]: Schema.optionalWith<Schema.Schema<number>, { exact: true }> }

const fields = {} as Record<McpOverrideKey, Schema.optionalWith<Schema.Schema<number>, { exact: true }>>
for (const key of settingKeys.filter(isOverridable)) {
  fields[key] = Schema.optionalWith(overrideSchema(settingsTable[key]), { exact: true })
}

/**
 * The per-call overrides of an MCP tool, in the units the user writes (seconds), each optional and
 * within the setting's bounds: spread `McpOverrides.fields` into a tool's input Schema.
 */
export const McpOverrides: Schema.Struct<OverrideFields> = Schema.Struct(fields)
export type McpOverrides = typeof McpOverrides.Type
