import { Either, Option, ParseResult, Schema } from "effect"
import { boundedNumber } from "./kinds.js"
import { applyPreset } from "./presets.js"
import type { AnyMcpOverride, AnySetting, McpOverride } from "./setting.js"
import { type SettingKey, settingKeys, type SettingsTable, settingsTable } from "./table.js"
import type { SettingsValue } from "./values.js"

// Per-call settings: what one call may set for itself (an MCP tool's arguments, a `batch` line, an eval
// system), the table's entries made with `perCall`. A tool's input schema takes its fields from here, and the
// call's values become a patch of `Settings` for that call alone (`patchSettings`): the programs read only
// `Settings`, so an argument a tool advertises cannot be ignored further down.

/** The settings one call may set for itself. */
export type PerCallKey = { [K in SettingKey]: SettingsTable[K] extends { readonly mcp: object } ? K : never }[SettingKey]

type ValueOf<K extends PerCallKey> = SettingsTable[K] extends { readonly mcp: McpOverride<infer A> } ? A : never

/** A call's own values, in the units the user writes (seconds), each optional. */
export type PerCallValues = { readonly [K in PerCallKey]?: ValueOf<K> | undefined }

const entryOf = (key: PerCallKey): AnySetting & { readonly mcp: AnyMcpOverride } => settingsTable[key]

export const perCallKeys: ReadonlyArray<PerCallKey> = settingKeys.filter((key): key is PerCallKey => "mcp" in settingsTable[key])

/** What a call may give for one setting: the mark's own schema, else the kind's (a number within its bounds). */
const valueSchema = (entry: AnySetting & { readonly mcp: AnyMcpOverride }): Schema.Schema.AnyNoContext => {
  const bounds = entry.kind.bounds
  return entry.mcp.schema ??
    (bounds === undefined ? entry.kind.plain : boundedNumber(bounds.min, Math.min(bounds.max, entry.mcp.max ?? bounds.max), bounds.integer))
}

type Fields<K extends PerCallKey> = { readonly [P in K]: Schema.optionalWith<Schema.Schema<ValueOf<P>>, { exact: true }> }

const fieldsOf = <K extends PerCallKey>(keys: ReadonlyArray<K>, describe: boolean): Fields<K> =>
  Object.fromEntries(keys.map((key) => {
    const entry = entryOf(key)
    const schema = valueSchema(entry)
    const described = describe && entry.mcp.description !== undefined ? schema.annotations({ description: entry.mcp.description }) : schema
    return [key, Schema.optionalWith(described, { exact: true })]
  })) as Fields<K>

/** The input-schema fields of the per-call settings a tool takes, in the order given: spread them into its Schema. */
export const perCallFields = <const K extends PerCallKey>(...keys: ReadonlyArray<K>): Fields<K> => fieldsOf(keys, true)

/** Every per-call setting as one call may give it (undescribed: a refusal then says the bounds, not the description). */
const PerCallSettings = Schema.Struct(fieldsOf(perCallKeys, false))

/**
 * One call's settings: its preset over the server's (when it names one), then its own values over both,
 * converted like the settings themselves (seconds to milliseconds). A bad value or an unknown preset is a
 * one-line message naming the field.
 */
export const patchSettings = (settings: SettingsValue, values: PerCallValues): Either.Either<SettingsValue, string> =>
  Schema.decodeUnknownEither(PerCallSettings, { onExcessProperty: "error" })(withoutUndefined(values)).pipe(
    Either.mapLeft((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return `${issue?.path.join(".") ?? "(settings)"}: ${issue?.message ?? "invalid"}`
    }),
    Either.flatMap((decoded) =>
      Either.map(decoded.preset === undefined ? Either.right(settings) : applyPreset(settings, decoded.preset), (base) => {
        const patch: Record<string, unknown> = {}
        for (const key of perCallKeys) {
          const value: unknown = decoded[key]
          if (key === "preset" || value === undefined) continue
          const entry = entryOf(key)
          // A call's values are no paths and read no environment: none of the conversions needs a context.
          const converted = entry.convert === undefined ? value : entry.convert(value as never, CALL_CONTEXT)
          patch[entry.field] = entry.optional ? Option.some(converted) : converted
        }
        // The table gives each field its type; the loop above cannot say it field by field.
        return { ...base, ...patch } as SettingsValue
      })
    )
  )

const CALL_CONTEXT = { env: {}, home: "", baseDir: "" }

const withoutUndefined = (values: PerCallValues): Record<string, unknown> =>
  Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined))
