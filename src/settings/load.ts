import { FileSystem } from "@effect/platform"
import { Chunk, Config, ConfigError, ConfigProvider, Effect, Either, Option, ParseResult, Schema, Stream } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { SettingsError } from "../domain/errors.js"
import type { ModelOptions, ModelSpec } from "../domain/modelOptions.js"
import { collectModelOptions, fileValueText, specsIn } from "./modelEntries.js"
import { defaultConfigFile, isOpenRouterUrl } from "./paths.js"
import type { SettingContext } from "./setting.js"
import { type SettingKey, settingKeys, settingsTable } from "./table.js"
import type { RawSettings, SettingSource, SettingsValue } from "./values.js"

/** A config file is a few hundred bytes; a larger one is a mistake (or `/dev/zero`), refused before it is parsed. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024

/** The config file's schema: every key of the table, in the shape JSON gives it; any other key is refused. */
export const ConfigFileSchema = Schema.Struct(
  Object.fromEntries(settingKeys.map((key) => [key, Schema.optional(settingsTable[key].kind.file)]))
)

const decodeConfigFile = Schema.decodeUnknown(Schema.parseJson(ConfigFileSchema), { onExcessProperty: "error" })

/** One line naming the key and what is wrong with it. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (!issue) return "invalid"
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""
  const what = issue._tag === "Unexpected" ? "unknown key" : issue.message.replace(/\s+/g, " ")
  return `${where}${what}`
}

const readCapped = (file: string) =>
  FileSystem.FileSystem.pipe(
    Effect.flatMap((fs) => Stream.runCollect(fs.stream(file, { bytesToRead: MAX_CONFIG_FILE_BYTES + 1 }))),
    Effect.mapError((e) => new SettingsError({ setting: "config file", message: `cannot read ${file}: ${e.message}` })),
    Effect.map((chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks))),
    Effect.filterOrFail(
      (bytes) => bytes.length <= MAX_CONFIG_FILE_BYTES,
      () => new SettingsError({ setting: "config file", message: `${file}: larger than ${MAX_CONFIG_FILE_BYTES} bytes; not a config file` })
    ),
    Effect.map((bytes) => bytes.toString("utf8"))
  )

const noOptions: Readonly<Record<string, ModelOptions>> = {}

const readConfigFile = Effect.fn("Settings.readConfigFile")(function*(file: string) {
  const decoded = yield* decodeConfigFile(yield* readCapped(file)).pipe(
    Effect.mapError((e) => new SettingsError({ setting: "config file", message: `${file}: ${firstIssue(e)}` }))
  )
  const raw: RawSettings = {}
  const specs: Array<ModelSpec> = []
  for (const [key, value] of Object.entries(decoded)) {
    if (value !== undefined && key in settingsTable) {
      raw[key as SettingKey] = fileValueText(value)
      specs.push(...specsIn(value))
    }
  }
  const modelOptions = yield* Either.mapLeft(
    collectModelOptions(specs),
    (message) => new SettingsError({ setting: "config file", message: `${file}: ${message}` })
  )
  return { raw, modelOptions }
})

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

const toProvider = (raw: RawSettings, extra: Record<string, string> = {}) =>
  ConfigProvider.fromMap(new Map(Object.entries({ ...raw, ...extra }).filter((e): e is [string, string] => e[1] !== undefined)))

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
}

/**
 * Reads every setting with the contract's precedence: flag > environment > config file > default.
 * A bad value fails with a SettingsError naming the flag, variable or file key it came from.
 */
export const loadSettings = Effect.fn("Settings.load")(function*(input: LoadInput) {
  const home = os.homedir()
  const configPath = input.configFlag ?? (input.env.PARALLEL_LLM_CONFIG || undefined)
  // A named config file must exist; the default one is read only when it does.
  const fs = yield* FileSystem.FileSystem
  const defaultFile = defaultConfigFile(input.env)
  const configFile = configPath !== undefined
    ? path.resolve(configPath === "~" || configPath.startsWith("~/") ? path.join(home, configPath.slice(1)) : configPath)
    : (yield* fs.exists(defaultFile).pipe(Effect.orElseSucceed(() => false)))
    ? defaultFile
    : undefined
  const fromFile = configFile === undefined ? { raw: {}, modelOptions: noOptions } : yield* readConfigFile(configFile)
  const fileRaw: RawSettings = fromFile.raw
  const envRaw = fromEnvironment(input.env)
  const apiKey = input.env.OPENROUTER_API_KEY?.trim()

  const sources = {} as Record<SettingKey, SettingSource>
  for (const key of settingKeys) {
    sources[key] = input.flags[key] !== undefined
      ? "flag"
      : envRaw[key] !== undefined
      ? "env"
      : fileRaw[key] !== undefined
      ? "file"
      : "default"
  }
  const describe = (key: string): string => {
    if (!(key in settingsTable)) return key
    const k = key as SettingKey
    switch (sources[k]) {
      case "flag":
        return `--${settingsTable[k].flag}`
      case "env":
        return settingsTable[k].env
      case "file":
        return `${k} (in ${configFile})`
      default:
        return k
    }
  }

  const contextOf = (key: SettingKey): SettingContext => ({
    env: input.env,
    home,
    baseDir: sources[key] === "file" && configFile !== undefined ? path.dirname(configFile) : process.cwd()
  })
  const config = Config.all(Object.fromEntries(settingKeys.map((key) => [key, settingsTable[key].config(key, contextOf(key))])))
  const provider = toProvider(input.flags).pipe(
    ConfigProvider.orElse(() => toProvider(envRaw, apiKey ? { apiKey } : {})),
    ConfigProvider.orElse(() => toProvider(fileRaw)),
    ConfigProvider.orElse(() => toProvider(input.defaults ?? {}))
  )
  const values = yield* Effect.all({ byKey: config, apiKey: Config.option(Config.redacted("apiKey")) }).pipe(
    Effect.withConfigProvider(provider),
    Effect.mapError((error) => {
      const { key, message } = firstConfigProblem(error)
      return new SettingsError({ setting: describe(key), message: `${describe(key)}: ${message}` })
    })
  )
  const fields = Object.fromEntries(settingKeys.map((key) => [settingsTable[key].field, values.byKey[key]]))
  const loaded = {
    ...fields,
    apiKey: values.apiKey,
    configFile: Option.fromNullable(configFile),
    modelOptions: fromFile.modelOptions
  } as SettingsValue
  const openRouter = isOpenRouterUrl(loaded.baseUrl)
  // The default fallback synthesizer is an OpenRouter model: another server gets none it was not given.
  const settings = !openRouter && sources.fallbackSynthesizers === "default" ? { ...loaded, fallbackSynthesizers: [] } : loaded
  if (input.requireApiKey !== false && Option.isNone(settings.apiKey) && openRouter) {
    return yield* new SettingsError({
      setting: "OPENROUTER_API_KEY",
      message: `OPENROUTER_API_KEY is not set. Get a key at https://openrouter.ai/keys and export it ` +
        `(for an MCP client, put it in the server's "env" block). Other OpenAI-compatible servers (--base-url) need none.`
    })
  }
  return { settings, sources } satisfies LoadedSettings
})

/** The deepest line of a formatted schema error: the one that says what was wrong, not the schema's type. */
const innermost = (message: string): string => {
  const lines = message.split("\n").map((l) => l.replace(/^[\s└├│─]+/, "").trim()).filter((l) => l !== "")
  return lines[lines.length - 1] ?? message.trim()
}

/** The most useful single line out of a ConfigError tree. */
const firstConfigProblem = (error: ConfigError.ConfigError): { key: string; message: string } => {
  switch (error._op) {
    case "And":
    case "Or":
      return firstConfigProblem(error.left)
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return { key: error.path[0] ?? "setting", message: innermost(error.message) }
  }
}
