import { FileSystem } from "@effect/platform"
import { Config, Effect, Either, Option, ParseResult, Schema } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { isCliAgent } from "../domain/cliAgent.js"
import { SettingsError } from "../domain/errors.js"
import { ShallowJson, tooDeepMessage } from "../domain/jsonDepth.js"
import type { ModelOptions } from "../domain/modelOptions.js"
import { readTextSafely } from "../domain/safeFile.js"
import { apiKeyProblem, modelListsProblem } from "./checks.js"
import { lineOfIssue, syntaxErrorPlace } from "./configLine.js"
import { type Layers, settle } from "./layers.js"
import { collectModelOptions, fileValueText, specsIn } from "./modelEntries.js"
import { defaultConfigFile, isOpenRouterUrl } from "./paths.js"
import { decodePresets, presetKeys, PresetsInFile, unknownPresetMessage } from "./presets.js"
import { type SettingKey, settingKeys, settingsTable } from "./table.js"
import type { RawSettings, SettingSource, SettingsValue } from "./values.js"

/** A config file is a few hundred bytes; a larger one is a mistake (or `/dev/zero`), refused before it is parsed. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024

/** The config file's schema: every key of the table, in the shape JSON gives it; any other key is refused. */
export const ConfigFileSchema = Schema.Struct({
  ...Object.fromEntries(settingKeys.map((key) => [key, Schema.optional(settingsTable[key].kind.file)])),
  presets: Schema.optional(PresetsInFile)
})

// A too deeply nested file is refused before the schema's recursive decoding meets it (a stack overflow).
const decodeConfigFile = Schema.decodeUnknown(Schema.parseJson(Schema.compose(ShallowJson, ConfigFileSchema, { strict: false })), {
  onExcessProperty: "error"
})

/** One line naming the key and what is wrong with it; never the file's text (it may be any file: `/etc/shadow`). */
const firstIssue = (error: ParseResult.ParseError, text: string): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (!issue) return "invalid"
  if (issue.path.length === 0) {
    if (issue._tag === "Transformation") return `not valid JSON at ${syntaxErrorPlace(text) ?? "its end"}`
    return issue.message === tooDeepMessage ? tooDeepMessage : "not a JSON object"
  }
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""
  const inPreset = issue.path[0] === "presets" && issue.path.length === 3
  const what = issue._tag !== "Unexpected"
    ? issue.message.replace(/\s+/g, " ")
    : inPreset
    ? `not a setting a preset may hold (it may hold ${presetKeys.join(", ")})`
    : "unknown key"
  return `${where}${what}`
}

/** The file, the line when it is known, and what is wrong; a text that is not JSON says its own line and column. */
const configFileProblem = (file: string, text: string, error: ParseResult.ParseError): string => {
  const problem = firstIssue(error, text)
  return problem.startsWith("not valid JSON") ? `${file}: ${problem}` : `${file}${lineOfIssue(text, error)}: ${problem}`
}

/** Opened once and checked as opened: a FIFO or a device is refused at once, not waited on or read forever. */
const readCapped = (file: string) =>
  readTextSafely(file, { maxBytes: MAX_CONFIG_FILE_BYTES, followLinks: true }).pipe(
    Effect.mapError((e) =>
      new SettingsError({
        setting: "config file",
        message: e.reason === "too large"
          ? `${file}: larger than ${MAX_CONFIG_FILE_BYTES} bytes; not a config file`
          : `cannot read ${e.message}`
      })
    )
  )

const noOptions: Readonly<Record<string, ModelOptions>> = {}

const readConfigFile = Effect.fn("Settings.readConfigFile")(function*(file: string) {
  const text = yield* readCapped(file)
  const decoded = yield* decodeConfigFile(text).pipe(
    Effect.mapError((e) => new SettingsError({ setting: "config file", message: configFileProblem(file, text, e) }))
  )
  const { presets, ...settings } = decoded
  // Model objects, at the top level and in every preset alike: their options by id.
  const specs = [settings, ...Object.values(presets ?? {})].flatMap((values) => Object.values(values).flatMap(specsIn))
  const modelOptions = yield* Either.mapLeft(
    collectModelOptions(specs),
    (message) => new SettingsError({ setting: "config file", message: `${file}: ${message}` })
  )
  return {
    raw: rawOf(settings),
    presets: Object.fromEntries(Object.entries(presets ?? {}).map(([name, preset]) => [name, rawOf(preset)])),
    modelOptions
  }
})

/**
 * The file's values as text, for the schemas that also read flags and environment: the top level and each
 * preset alike.
 */
const rawOf = (values: Readonly<Record<string, unknown>>): RawSettings => {
  const raw: RawSettings = {}
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && key in settingsTable) {
      raw[key as SettingKey] = fileValueText(value)
    }
  }
  return raw
}

/**
 * An MCP Bundle host that leaves an optional `user_config` field unset may pass its placeholder through as it
 * is: `${user_config.models}` means "not set", like an empty value.
 */
const isUnset = (value: string | undefined): value is undefined =>
  value === undefined || value === "" || /^\$\{user_config\.\w+\}$/.test(value)

const fromEnvironment = (env: Readonly<Record<string, string | undefined>>): RawSettings => {
  const raw: RawSettings = {}
  for (const key of settingKeys) {
    const value = env[settingsTable[key].env]
    if (!isUnset(value)) raw[key] = value
  }
  return raw
}

export interface LoadedSettings {
  readonly settings: SettingsValue
  readonly sources: Readonly<Record<SettingKey, SettingSource>>
}

export interface LoadInput {
  readonly flags: RawSettings
  readonly configFlag?: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  /** Commands that make no paid call (config, models, runs) work without a key. */
  readonly requireApiKey?: boolean
  /** A command's own defaults in place of the table's (batch: a process-wide concurrency); the source stays `default`. */
  readonly defaults?: RawSettings
  /** Reads no config file at all (serve's fallback when the file is what is wrong: see degraded.ts). */
  readonly withoutConfigFile?: boolean
  /** `~` and the directory relative paths start from: the process's own unless the command line runs elsewhere. */
  readonly home?: string
  readonly cwd?: string
  /** Checks of a value that only a layer above the settings can make (see `SettingChecks`). */
  readonly checks?: SettingChecks
}

/**
 * By setting key, a check of its value as read (a message saying what is wrong, or undefined) that only a layer
 * above the settings can make: whether `strategy` names a strategy of the registry (src/programs/strategies/).
 * A wrong value is refused like any other, naming the flag, variable or key it was written in.
 */
export type SettingChecks = { readonly [K in SettingKey]?: (value: string) => string | undefined }

/**
 * Reads every setting with the contract's precedence: flag > environment > the active preset > config file > default.
 * A bad value fails with a SettingsError naming the flag, variable or file key it came from.
 */
export const loadSettings = Effect.fn("Settings.load")(function*(input: LoadInput) {
  const home = input.home ?? os.homedir()
  const cwd = input.cwd ?? process.cwd()
  const configFile = yield* configFileOf(input, home)
  const file = configFile === undefined ? { raw: {}, presets: {}, modelOptions: noOptions } : yield* readConfigFile(configFile)
  const presets = configFile === undefined
    ? {}
    : yield* decodePresets(file.presets, { env: input.env, home, baseDir: path.dirname(configFile) }, configFile)
  const base: Layers = {
    flags: input.flags,
    env: fromEnvironment(input.env),
    preset: {},
    file: file.raw,
    defaults: input.defaults ?? {},
    apiKey: input.env.OPENROUTER_API_KEY?.trim(),
    presetName: undefined,
    configFile,
    environment: input.env,
    home,
    cwd
  }

  // The preset's name first (flag > environment > file): its values then sit between the environment and the file.
  const unpreset = settle(base)
  const presetName = Option.getOrUndefined(
    yield* settingsTable.preset.config("preset", unpreset.contextOf("preset")).pipe(
      Effect.withConfigProvider(unpreset.provider),
      Effect.mapError(unpreset.refusal)
    )
  )
  const presetRaw = presetName === undefined ? {} : Object.hasOwn(file.presets, presetName) ? file.presets[presetName] : undefined
  if (presetName !== undefined && presetRaw === undefined) {
    const where = unpreset.describe("preset")
    return yield* new SettingsError({
      setting: where,
      message: `${where}: ${unknownPresetMessage(presetName, Object.keys(file.presets), Option.fromNullable(configFile))}`
    })
  }
  const settled = settle({ ...base, preset: presetRaw ?? {}, presetName })
  const { describe, sources } = settled
  const { apiKey, fields } = yield* readValues(settled)
  const loaded = {
    ...fields,
    apiKey,
    configFile: Option.fromNullable(configFile),
    presets,
    modelOptions: file.modelOptions
  } as SettingsValue
  const openRouter = isOpenRouterUrl(loaded.baseUrl)
  // A panel of CLI agents only (docs/cli-agents.md) sends nothing to OpenRouter: no key to require.
  const httpModels = [...loaded.models, loaded.synthesizer].some((m) => !isCliAgent(m))
  // The default fallback synthesizer is an OpenRouter model: another server, or a panel of CLI agents only (which
  // would otherwise fail over to a paid call, or to a 401 without a key), gets none it was not given.
  const defaultFallbacksApply = openRouter && httpModels
  const settings = !defaultFallbacksApply && sources.fallbackSynthesizers === "default" ? { ...loaded, fallbackSynthesizers: [] } : loaded
  yield* checkValues(fields, input.checks ?? {}, describe)
  yield* checkConsistent(settings, base.apiKey, describe, input.requireApiKey !== false && openRouter && httpModels)
  return { settings, sources } satisfies LoadedSettings
})

/**
 * Each setting's value by its field, and the API key. Only what some layer sets is read through Config: most
 * settings are unset on every load, and reading one that is (Config.option over missing data, then its default)
 * cost ~40 Effect operations, ~3,000 a load; the others take the table's `unset` value, which is the same.
 */
const readValues = (settled: ReturnType<typeof settle>) => {
  const { contextOf, isSet, provider, refusal } = settled
  const read = settingKeys.filter(isSet)
  // (Config.all of no configs at all fails inside Effect.)
  const byKey: Config.Config<Readonly<Record<string, unknown>>> = read.length === 0
    ? Config.succeed({})
    : Config.all(Object.fromEntries(read.map((key) => [key, settingsTable[key].config(key, contextOf(key))])))
  return Effect.all({ byKey, apiKey: Config.option(Config.redacted("apiKey")) }).pipe(
    Effect.withConfigProvider(provider),
    Effect.mapError(refusal),
    Effect.map((values) => ({
      apiKey: values.apiKey,
      fields: Object.fromEntries(settingKeys.map((key) => [
        settingsTable[key].field,
        Object.hasOwn(values.byKey, key) ? values.byKey[key] : settingsTable[key].unset(contextOf(key))
      ]))
    }))
  )
}

/** The config file to read. A named config file must exist; the default one is read only when it does. */
const configFileOf = Effect.fnUntraced(function*(input: LoadInput, home: string) {
  if (input.withoutConfigFile === true) return undefined
  const configPath = input.configFlag ?? (input.env.PARALLEL_LLM_CONFIG || undefined)
  if (configPath !== undefined) {
    return path.resolve(
      input.cwd ?? process.cwd(),
      configPath === "~" || configPath.startsWith("~/") ? path.join(home, configPath.slice(1)) : configPath
    )
  }
  const fs = yield* FileSystem.FileSystem
  const defaultFile = defaultConfigFile(input.env, process.platform, home)
  return (yield* fs.exists(defaultFile).pipe(Effect.orElseSucceed(() => false))) ? defaultFile : undefined
})

const checkValues = (fields: Readonly<Record<string, unknown>>, checks: SettingChecks, describe: (key: SettingKey) => string) => {
  for (const key of settingKeys) {
    const value = fields[settingsTable[key].field]
    const problem = typeof value === "string" ? checks[key]?.(value) : undefined
    if (problem !== undefined) return new SettingsError({ setting: describe(key), message: `${describe(key)}: ${problem}` })
  }
  return Effect.void
}

/** Values that contradict each other, or a key that could never be sent (or none where one is needed): refused before any call. */
const checkConsistent = (
  settings: SettingsValue,
  apiKey: string | undefined,
  describe: (key: SettingKey) => string,
  needsKey: boolean
): Effect.Effect<void, SettingsError> => {
  const keyProblem = apiKey ? apiKeyProblem(apiKey) : undefined
  if (keyProblem !== undefined) return new SettingsError({ setting: "OPENROUTER_API_KEY", message: keyProblem })
  const listProblem = modelListsProblem(settings, apiKey, describe)
  if (listProblem !== undefined) return new SettingsError({ setting: listProblem.where, message: listProblem.message })
  // OpenRouter's web search takes one list or the other: both would fail every searching call.
  if (Option.isSome(settings.webDomains) && Option.isSome(settings.webExcludeDomains)) {
    return new SettingsError({
      setting: describe("webExcludeDomains"),
      message: `${describe("webExcludeDomains")}: not with ${describe("webDomains")} (web search takes one list or the other)`
    })
  }
  if (needsKey && Option.isNone(settings.apiKey)) {
    return new SettingsError({
      setting: "OPENROUTER_API_KEY",
      message: `OPENROUTER_API_KEY is not set. Get a key at https://openrouter.ai/keys and export it ` +
        `(for an MCP client, put it in the server's "env" block). Other OpenAI-compatible servers (--base-url) need none.`
    })
  }
  return Effect.void
}
