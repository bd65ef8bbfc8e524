import { FileSystem } from "@effect/platform"
import {
  Config,
  ConfigError,
  ConfigProvider,
  Context,
  Effect,
  Layer,
  Option,
  ParseResult,
  Redacted,
  Schema
} from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { SettingsError } from "../domain/errors.js"
import { FallbackList, ModelId, ModelList } from "../domain/model.js"

/**
 * Every user-facing setting: its flag, its environment variable and its key in the config file.
 * One table feeds the loader, the CLI options, error messages and `get_config`.
 */
export const settingNames = {
  baseUrl: { flag: "--base-url", env: "OPENROUTER_BASE_URL" },
  models: { flag: "--model", env: "PARALLEL_LLM_MODELS" },
  synthesizer: { flag: "--synthesizer", env: "PARALLEL_LLM_SYNTHESIZER" },
  fallbackSynthesizers: { flag: "--fallback-synthesizer", env: "PARALLEL_LLM_FALLBACK_SYNTHESIZERS" },
  concurrency: { flag: "--concurrency", env: "PARALLEL_LLM_CONCURRENCY" },
  timeout: { flag: "--timeout", env: "PARALLEL_LLM_TIMEOUT" },
  retries: { flag: "--retries", env: "PARALLEL_LLM_RETRIES" },
  retryBaseDelay: { flag: "--retry-base-delay", env: "PARALLEL_LLM_RETRY_BASE_DELAY" },
  temperature: { flag: "--temperature", env: "PARALLEL_LLM_TEMPERATURE" },
  maxTokens: { flag: "--max-tokens", env: "PARALLEL_LLM_MAX_TOKENS" },
  synthesisMaxChars: { flag: "--synthesis-max-chars", env: "PARALLEL_LLM_SYNTHESIS_MAX_CHARS" },
  deadline: { flag: "--deadline", env: "PARALLEL_LLM_DEADLINE" },
  synthesisReserve: { flag: "--synthesis-reserve", env: "PARALLEL_LLM_SYNTHESIS_RESERVE" },
  quorum: { flag: "--quorum", env: "PARALLEL_LLM_QUORUM" },
  grace: { flag: "--grace", env: "PARALLEL_LLM_GRACE" },
  maxResponseBytes: { flag: "--max-response-bytes", env: "PARALLEL_LLM_MAX_RESPONSE_BYTES" },
  maxPromptChars: { flag: "--max-prompt-chars", env: "PARALLEL_LLM_MAX_PROMPT_CHARS" },
  stream: { flag: "--no-stream", env: "PARALLEL_LLM_STREAM" },
  checkModels: { flag: "--check-models", env: "PARALLEL_LLM_CHECK_MODELS" },
  maxCost: { flag: "--max-cost", env: "PARALLEL_LLM_MAX_COST" },
  outputDir: { flag: "--output-dir", env: "PARALLEL_LLM_OUTPUT_DIR" },
  logLevel: { flag: "--log-level", env: "PARALLEL_LLM_LOG_LEVEL" },
  logFile: { flag: "--log-file", env: "PARALLEL_LLM_LOG_FILE" },
  appUrl: { flag: "--app-url", env: "PARALLEL_LLM_APP_URL" },
  appTitle: { flag: "--app-title", env: "PARALLEL_LLM_APP_TITLE" }
} as const

export type SettingKey = keyof typeof settingNames

/** Raw values as the user wrote them (flags are stringified; a repeated flag is joined with commas). */
export type RawSettings = Partial<Record<SettingKey, string>>

export const DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"

/** Five strong models from five different labs: diversity is what makes a synthesis worth more than one answer. */
export const DEFAULT_MODELS: ReadonlyArray<string> = [
  "openai/gpt-5",
  "anthropic/claude-sonnet-4.5",
  "google/gemini-2.5-pro",
  "x-ai/grok-4",
  "deepseek/deepseek-chat-v3.1"
]

/** Long context (1M tokens) so that five long candidates fit. */
export const DEFAULT_SYNTHESIZER = "google/gemini-2.5-pro"

/** Tried in order when the synthesizer fails: a different lab, so one provider's outage cannot take both. */
export const DEFAULT_FALLBACK_SYNTHESIZERS: ReadonlyArray<string> = ["anthropic/claude-sonnet-4.5"]

export const LogLevelName = Schema.Literal("debug", "info", "warning", "error")
export type LogLevelName = typeof LogLevelName.Type

export interface SettingsValue {
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly baseUrl: string
  readonly models: ReadonlyArray<string>
  readonly synthesizer: string
  readonly fallbackSynthesizers: ReadonlyArray<string>
  readonly concurrency: number
  readonly timeoutMs: number
  readonly retries: number
  readonly retryBaseDelayMs: number
  readonly temperature: number
  readonly maxTokens: Option.Option<number>
  readonly synthesisMaxChars: number
  /** The whole run must end by then (ms after it starts). */
  readonly deadlineMs: Option.Option<number>
  /** With a deadline: time kept for the synthesis; the fan-out stops this long before the deadline. */
  readonly synthesisReserveMs: Option.Option<number>
  /** Once this many candidates answered, wait at most `graceMs` more for the others. */
  readonly quorum: Option.Option<number>
  readonly graceMs: number
  /** A response larger than this is cut off (the connection closed) and fails with ResponseTooLarge. */
  readonly maxResponseBytes: number
  /** A longer prompt is refused before any call. */
  readonly maxPromptChars: number
  /** Stream answers (SSE): an aborted stream stops billing, and tokens arriving show progress. */
  readonly stream: boolean
  /** Check every model id against the provider's `GET /models` before spending money. */
  readonly checkModels: boolean
  /** Refuse a run whose worst-case cost (USD, at the provider's prices) passes this. */
  readonly maxCost: Option.Option<number>
  readonly outputDir: string
  readonly logLevel: LogLevelName
  readonly logFile: Option.Option<string>
  readonly appUrl: string
  readonly appTitle: string
  /** Where the config file came from, when one was read. */
  readonly configFile: Option.Option<string>
}

/** The effective settings of this process, read once at start-up. */
export class Settings extends Context.Tag("parallel-llm/Settings")<Settings, SettingsValue>() {}

// --- Schemas for the values (strings from flags, environment and the flattened config file) ---

const numberIn = (name: string, min: number, max: number) =>
  Schema.NumberFromString.pipe(
    Schema.filter((n) => (n >= min && n <= max) || `${name} must be between ${min} and ${max}, got ${n}`)
  )

const integerIn = (name: string, min: number, max: number) =>
  Schema.NumberFromString.pipe(
    Schema.filter((n) => (Number.isInteger(n) && n >= min && n <= max) || `${name} must be a whole number from ${min} to ${max}, got ${n}`)
  )

const HttpUrl = Schema.String.pipe(
  Schema.filter((s) => {
    try {
      const url = new URL(s)
      return url.protocol === "http:" || url.protocol === "https:" || `expected an http(s) URL, got ${s}`
    } catch {
      return `expected an http(s) URL, got ${JSON.stringify(s)}`
    }
  })
)

const BooleanFromText = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s) => /^(true|false|1|0|yes|no|on|off)$/i.test(s.trim()) || `expected true or false, got ${JSON.stringify(s)}`)
  ),
  Schema.Boolean,
  { strict: true, decode: (s) => /^(true|1|yes|on)$/i.test(s.trim()), encode: (b) => String(b) }
)

const NonEmpty = Schema.Trim.pipe(Schema.nonEmptyString({ message: () => "must not be empty" }))

const settingsConfig = (home: string, defaultOutputDir: string) =>
  Config.all({
    apiKey: Config.option(Config.redacted("apiKey")),
    baseUrl: Schema.Config("baseUrl", HttpUrl).pipe(
      Config.withDefault(DEFAULT_BASE_URL),
      Config.map((url) => url.replace(/\/+$/, ""))
    ),
    models: Schema.Config("models", ModelList).pipe(Config.withDefault(DEFAULT_MODELS)),
    synthesizer: Schema.Config("synthesizer", ModelId).pipe(Config.withDefault(DEFAULT_SYNTHESIZER)),
    fallbackSynthesizers: Schema.Config("fallbackSynthesizers", FallbackList).pipe(
      Config.withDefault(DEFAULT_FALLBACK_SYNTHESIZERS)
    ),
    concurrency: Schema.Config("concurrency", integerIn("concurrency", 1, 1024)).pipe(Config.withDefault(5)),
    timeoutMs: Schema.Config("timeout", numberIn("timeout", 0.001, 86_400)).pipe(
      Config.withDefault(240),
      Config.map((s) => Math.round(s * 1000))
    ),
    retries: Schema.Config("retries", integerIn("retries", 0, 20)).pipe(Config.withDefault(3)),
    retryBaseDelayMs: Schema.Config("retryBaseDelay", numberIn("retry base delay", 0, 600)).pipe(
      Config.withDefault(1),
      Config.map((s) => Math.round(s * 1000))
    ),
    temperature: Schema.Config("temperature", numberIn("temperature", 0, 2)).pipe(Config.withDefault(0.7)),
    maxTokens: Config.option(Schema.Config("maxTokens", integerIn("max tokens", 1, 10_000_000))),
    synthesisMaxChars: Schema.Config("synthesisMaxChars", integerIn("synthesis budget", 1_000, 100_000_000)).pipe(
      Config.withDefault(400_000)
    ),
    deadlineMs: Config.option(Schema.Config("deadline", numberIn("deadline", 0.001, 86_400))).pipe(
      Config.map(Option.map((s) => Math.round(s * 1000)))
    ),
    synthesisReserveMs: Config.option(Schema.Config("synthesisReserve", numberIn("synthesis reserve", 0, 86_400))).pipe(
      Config.map(Option.map((s) => Math.round(s * 1000)))
    ),
    quorum: Config.option(Schema.Config("quorum", integerIn("quorum", 1, 1000))),
    graceMs: Schema.Config("grace", numberIn("grace", 0, 86_400)).pipe(
      Config.withDefault(0),
      Config.map((s) => Math.round(s * 1000))
    ),
    maxResponseBytes: Schema.Config("maxResponseBytes", integerIn("max response bytes", 1_024, 1_073_741_824)).pipe(
      Config.withDefault(4 * 1024 * 1024)
    ),
    maxPromptChars: Schema.Config("maxPromptChars", integerIn("max prompt chars", 1, 100_000_000)).pipe(
      Config.withDefault(2_000_000)
    ),
    stream: Schema.Config("stream", BooleanFromText).pipe(Config.withDefault(true)),
    checkModels: Schema.Config("checkModels", BooleanFromText).pipe(Config.withDefault(false)),
    maxCost: Config.option(Schema.Config("maxCost", numberIn("max cost", 0, 1_000_000))),
    outputDir: Schema.Config("outputDir", NonEmpty).pipe(
      Config.withDefault(defaultOutputDir),
      Config.map((dir) => path.resolve(expandHome(dir, home)))
    ),
    logLevel: Schema.Config("logLevel", LogLevelName).pipe(Config.withDefault("info" as const)),
    logFile: Config.option(Schema.Config("logFile", NonEmpty)).pipe(
      Config.map(Option.map((file) => path.resolve(expandHome(file, home))))
    ),
    appUrl: Schema.Config("appUrl", HttpUrl).pipe(Config.withDefault("https://github.com/parallel-llm-mcp/parallel-llm-mcp")),
    appTitle: Schema.Config("appTitle", NonEmpty).pipe(Config.withDefault("parallel-llm-mcp"))
  })

const expandHome = (p: string, home: string): string =>
  p === "~" ? home : p.startsWith("~/") ? path.join(home, p.slice(2)) : p

/** This tool's per-user directory for data or configuration, by each platform's convention. */
const perUserDir = (
  kind: "data" | "config",
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
  home: string
): string => {
  const xdg = kind === "data" ? env.XDG_DATA_HOME : env.XDG_CONFIG_HOME
  const base = platform === "win32"
    ? (kind === "data" ? env.LOCALAPPDATA : env.APPDATA) ?? path.join(home, "AppData", kind === "data" ? "Local" : "Roaming")
    : platform === "darwin"
    ? path.join(home, "Library", "Application Support")
    : xdg && path.isAbsolute(xdg)
    ? xdg
    : path.join(home, ...(kind === "data" ? [".local", "share"] : [".config"]))
  return path.join(base, "parallel-llm-mcp")
}

/** The per-user data directory: never the working directory, which is where the original's runs collided. */
export const defaultOutputDir = (
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir()
): string => path.join(perUserDir("data", env, platform, home), "runs")

/** The config file read when no other is named: `~/.config/parallel-llm-mcp/config.json` or the platform's equivalent. */
export const defaultConfigFile = (
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir()
): string => path.join(perUserDir("config", env, platform, home), "config.json")

/** Local OpenAI-compatible servers (Ollama, LM Studio, vLLM, our test fakes) need no key. */
export const isLoopbackUrl = (url: string): boolean => {
  const host = new URL(url).hostname
  return host === "localhost" || host === "[::1]" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)
}

// --- The config file ---

const ConfigFileSchema = Schema.Struct({
  baseUrl: Schema.optional(Schema.String),
  models: Schema.optional(Schema.Union(Schema.Array(Schema.String), Schema.String)),
  synthesizer: Schema.optional(Schema.String),
  fallbackSynthesizers: Schema.optional(Schema.Union(Schema.Array(Schema.String), Schema.String)),
  concurrency: Schema.optional(Schema.Number),
  timeout: Schema.optional(Schema.Number),
  retries: Schema.optional(Schema.Number),
  retryBaseDelay: Schema.optional(Schema.Number),
  temperature: Schema.optional(Schema.Number),
  maxTokens: Schema.optional(Schema.Number),
  synthesisMaxChars: Schema.optional(Schema.Number),
  deadline: Schema.optional(Schema.Number),
  synthesisReserve: Schema.optional(Schema.Number),
  quorum: Schema.optional(Schema.Number),
  grace: Schema.optional(Schema.Number),
  maxResponseBytes: Schema.optional(Schema.Number),
  maxPromptChars: Schema.optional(Schema.Number),
  stream: Schema.optional(Schema.Boolean),
  checkModels: Schema.optional(Schema.Boolean),
  maxCost: Schema.optional(Schema.Number),
  outputDir: Schema.optional(Schema.String),
  logLevel: Schema.optional(Schema.String),
  logFile: Schema.optional(Schema.String),
  appUrl: Schema.optional(Schema.String),
  appTitle: Schema.optional(Schema.String)
})

const decodeConfigFile = Schema.decodeUnknown(Schema.parseJson(ConfigFileSchema), { onExcessProperty: "error" })

/** One line naming the key and what is wrong with it. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (!issue) return "invalid"
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""
  const what = issue._tag === "Unexpected" ? "unknown key" : issue.message.replace(/\s+/g, " ")
  return `${where}${what}`
}

const readConfigFile = Effect.fn("Settings.readConfigFile")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file).pipe(
    Effect.mapError((e) => new SettingsError({ setting: "config file", message: `cannot read ${file}: ${e.message}` }))
  )
  const decoded = yield* decodeConfigFile(text).pipe(
    Effect.mapError((e) =>
      new SettingsError({
        setting: "config file",
        message: `${file}: ${firstIssue(e)}`
      })
    )
  )
  const raw: RawSettings = {}
  for (const [key, value] of Object.entries(decoded) as Array<[SettingKey, unknown]>) {
    if (value !== undefined) raw[key] = Array.isArray(value) ? (value.length === 0 ? "none" : value.join(",")) : String(value)
  }
  return raw
})

const fromEnvironment = (env: Readonly<Record<string, string | undefined>>): RawSettings => {
  const raw: RawSettings = {}
  for (const key of Object.keys(settingNames) as Array<SettingKey>) {
    const value = env[settingNames[key].env]
    if (value !== undefined && value !== "") raw[key] = value
  }
  return raw
}

const toProvider = (raw: RawSettings, extra: Record<string, string> = {}) =>
  ConfigProvider.fromMap(new Map(Object.entries({ ...raw, ...extra }).filter((e): e is [string, string] => e[1] !== undefined)))

/** Where a setting's value came from, so that an error names it the way the user wrote it. */
export type SettingSource = "flag" | "env" | "file" | "default"

export interface LoadedSettings {
  readonly settings: SettingsValue
  readonly sources: Readonly<Record<SettingKey, SettingSource>>
}

/**
 * Reads every setting with the contract's precedence: flag > environment > config file > default.
 * A bad value fails with a SettingsError naming the flag, variable or file key it came from.
 */
export const loadSettings = Effect.fn("Settings.load")(function*(input: {
  readonly flags: RawSettings
  readonly configFlag?: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  /** Commands that make no paid call (config, models) work without a key. */
  readonly requireApiKey?: boolean
}) {
  const home = os.homedir()
  const configPath = input.configFlag ?? (input.env.PARALLEL_LLM_CONFIG || undefined)
  // A named config file must exist; the default one is read only when it does.
  const fs = yield* FileSystem.FileSystem
  const defaultFile = defaultConfigFile(input.env)
  const configFile = configPath !== undefined
    ? path.resolve(expandHome(configPath, home))
    : (yield* fs.exists(defaultFile).pipe(Effect.orElseSucceed(() => false)))
    ? defaultFile
    : undefined
  const fileRaw: RawSettings = configFile === undefined ? {} : yield* readConfigFile(configFile)
  const envRaw = fromEnvironment(input.env)
  const apiKey = input.env.OPENROUTER_API_KEY?.trim()

  const sources = {} as Record<SettingKey, SettingSource>
  for (const key of Object.keys(settingNames) as Array<SettingKey>) {
    sources[key] = input.flags[key] !== undefined
      ? "flag"
      : envRaw[key] !== undefined
      ? "env"
      : fileRaw[key] !== undefined
      ? "file"
      : "default"
  }
  const describe = (key: string): string => {
    if (!(key in settingNames)) return key
    const k = key as SettingKey
    switch (sources[k]) {
      case "flag":
        return settingNames[k].flag
      case "env":
        return settingNames[k].env
      case "file":
        return `${k} (in ${configFile})`
      default:
        return k
    }
  }

  const provider = toProvider(input.flags).pipe(
    ConfigProvider.orElse(() => toProvider(envRaw, apiKey ? { apiKey } : {})),
    ConfigProvider.orElse(() => toProvider(fileRaw))
  )
  const values = yield* settingsConfig(home, defaultOutputDir(input.env)).pipe(
    Effect.withConfigProvider(provider),
    Effect.mapError((error) => {
      const { key, message } = firstConfigProblem(error)
      return new SettingsError({ setting: describe(key), message: `${describe(key)}: ${message}` })
    })
  )
  if (input.requireApiKey !== false && Option.isNone(values.apiKey) && !isLoopbackUrl(values.baseUrl)) {
    return yield* new SettingsError({
      setting: "OPENROUTER_API_KEY",
      message:
        `OPENROUTER_API_KEY is not set. Get a key at https://openrouter.ai/keys and export it ` +
        `(for an MCP client, put it in the server's "env" block). Only a loopback --base-url works without a key.`
    })
  }
  const settings: SettingsValue = { ...values, configFile: Option.fromNullable(configFile) }
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

/** The settings as plain JSON, the key redacted: what `get_config` and `--json` may show. */
export const describeSettings = (settings: SettingsValue) => ({
  baseUrl: settings.baseUrl,
  apiKey: Option.isSome(settings.apiKey) ? "<redacted>" : "<not set>",
  models: settings.models,
  synthesizer: settings.synthesizer,
  fallbackSynthesizers: settings.fallbackSynthesizers,
  concurrency: settings.concurrency,
  timeoutMs: settings.timeoutMs,
  retries: settings.retries,
  retryBaseDelayMs: settings.retryBaseDelayMs,
  temperature: settings.temperature,
  maxTokens: Option.getOrNull(settings.maxTokens),
  synthesisMaxChars: settings.synthesisMaxChars,
  deadlineMs: Option.getOrNull(settings.deadlineMs),
  synthesisReserveMs: Option.getOrNull(settings.synthesisReserveMs),
  quorum: Option.getOrNull(settings.quorum),
  graceMs: settings.graceMs,
  maxResponseBytes: settings.maxResponseBytes,
  maxPromptChars: settings.maxPromptChars,
  stream: settings.stream,
  checkModels: settings.checkModels,
  maxCost: Option.getOrNull(settings.maxCost),
  outputDir: settings.outputDir,
  logLevel: settings.logLevel,
  logFile: Option.getOrNull(settings.logFile),
  configFile: Option.getOrNull(settings.configFile)
})

/** A layer holding already-loaded settings. */
export const layerSettings = (settings: SettingsValue): Layer.Layer<Settings> => Layer.succeed(Settings, settings)

/** Settings for tests and in-process use: defaults plus overrides, no key needed on loopback. */
export const makeTestSettings = (overrides: Partial<SettingsValue> = {}): SettingsValue => ({
  apiKey: Option.some(Redacted.make("sk-or-test-key")),
  baseUrl: "http://127.0.0.1:9/api/v1",
  models: ["test/alpha", "test/beta", "test/gamma"],
  synthesizer: "test/synth",
  fallbackSynthesizers: [],
  concurrency: 5,
  timeoutMs: 240_000,
  retries: 3,
  retryBaseDelayMs: 1000,
  temperature: 0.7,
  maxTokens: Option.none(),
  synthesisMaxChars: 400_000,
  deadlineMs: Option.none(),
  synthesisReserveMs: Option.none(),
  quorum: Option.none(),
  graceMs: 0,
  maxResponseBytes: 4 * 1024 * 1024,
  maxPromptChars: 2_000_000,
  stream: false,
  checkModels: false,
  maxCost: Option.none(),
  outputDir: path.join(os.tmpdir(), "parallel-llm-test-runs"),
  logLevel: "info",
  logFile: Option.none(),
  appUrl: "https://example.test",
  appTitle: "parallel-llm-mcp",
  configFile: Option.none(),
  ...overrides
})
