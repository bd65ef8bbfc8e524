import { Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { loadSettings, type RawSettings, type SettingKey, settingNames } from "../services/Settings.js"

// The settings flags shared by every command that runs the pipeline. Values stay text here: the
// settings loader decodes flags, environment and config file with one set of schemas and messages.

const text = (key: SettingKey, description: string) =>
  Options.text(settingNames[key].flag.slice(2)).pipe(
    Options.withDescription(`${description} [env ${settingNames[key].env}]`),
    Options.optional
  )

export const settingsOptions = {
  baseUrl: text("baseUrl", "OpenAI-compatible API base URL (default https://openrouter.ai/api/v1)."),
  models: Options.text("model").pipe(
    Options.withAlias("m"),
    Options.withDescription(
      `A candidate model id; repeat for several (default: five strong models from five labs). [env ${settingNames.models.env}, comma-separated]`
    ),
    Options.repeated
  ),
  synthesizer: Options.text("synthesizer").pipe(
    Options.withAlias("s"),
    Options.withDescription(`The model that merges the answers (default google/gemini-2.5-pro). [env ${settingNames.synthesizer.env}]`),
    Options.optional
  ),
  fallbackSynthesizers: Options.text("fallback-synthesizer").pipe(
    Options.withDescription(
      `A synthesizer tried when the one before it fails; repeatable, "none" for none. [env ${settingNames.fallbackSynthesizers.env}, comma-separated]`
    ),
    Options.repeated
  ),
  concurrency: text("concurrency", "HTTP calls in flight: for one run (default 5); in batch, for the whole process (default 16)."),
  timeout: text("timeout", "Seconds one model may take, retries included (default 240)."),
  retries: text("retries", "Retries after the first attempt, for transient failures only (default 3)."),
  retryBaseDelay: text("retryBaseDelay", "Seconds before the first retry; doubles each time, with jitter, never sooner than Retry-After (default 1)."),
  temperature: text("temperature", "Sampling temperature, 0 to 2 (default 0.7)."),
  maxTokens: text("maxTokens", "Max output tokens per call (default: the provider's)."),
  synthesisMaxChars: text("synthesisMaxChars", "Characters of candidate text the synthesizer gets at most; longer answers are cut with a marker (default 400000)."),
  deadline: text("deadline", "Seconds the whole run may take; stragglers are cut so the synthesis still fits (default: none)."),
  synthesisReserve: text("synthesisReserve", "With --deadline: seconds kept for the synthesis (default 40% of the deadline)."),
  quorum: text("quorum", "Stop waiting once this many candidates answered, after --grace (default: all)."),
  grace: text("grace", "Seconds to wait for the others once the quorum answered (default 0)."),
  maxResponseBytes: text("maxResponseBytes", "Largest accepted response in bytes; a larger one is cut off (default 4194304)."),
  maxPromptChars: text("maxPromptChars", "Largest accepted prompt in characters (default 2000000)."),
  stream: Options.boolean("no-stream").pipe(
    Options.withDescription(`Ask for whole answers instead of streamed ones (for servers without SSE). [env ${settingNames.stream.env}=false]`),
    Options.optional
  ),
  checkModels: Options.boolean("check-models").pipe(
    Options.withDescription(`Check every model id against the provider's model list before any paid call. [env ${settingNames.checkModels.env}=true]`),
    Options.optional
  ),
  maxCost: text("maxCost", "Refuse, before any call, a run whose worst-case cost in USD (at the provider's prices) is higher."),
  outputDir: text("outputDir", "Where run directories go (default: ~/.local/share/parallel-llm-mcp/runs or the platform's equivalent)."),
  logFile: text("logFile", "Also append log lines to this file."),
  appUrl: text("appUrl", "HTTP-Referer attribution header sent to OpenRouter."),
  appTitle: text("appTitle", "X-Title attribution header sent to OpenRouter."),
  mcpWait: text("mcpWait", "serve: seconds an MCP call waits for its run before answering `running` with the run id (0: at once; default 45)."),
  resourceLinks: Options.boolean("resource-links").pipe(
    Options.withDescription(`serve: add resource_link blocks to tool results (some clients reject them). [env ${settingNames.resourceLinks.env}=true]`),
    Options.optional
  ),
  config: Options.text("config").pipe(
    Options.withDescription("A JSON config file (keys as in the README; flags and environment win over it). [env PARALLEL_LLM_CONFIG]"),
    Options.optional
  )
} as const

/**
 * `--log-level` is one of @effect/cli's built-in option names, so `main.ts` takes it off the command line
 * before parsing; it is read here, from argv, so that it still outranks the environment and the config file.
 */
export const logLevelFromArgv = (argv: ReadonlyArray<string>): string | undefined => {
  let found: string | undefined
  argv.forEach((arg, i) => {
    if (arg === "--log-level" && argv[i + 1] !== undefined) found = argv[i + 1]
    else if (arg.startsWith("--log-level=")) found = arg.slice("--log-level=".length)
  })
  return found
}

type ParsedOptions = {
  readonly [K in keyof typeof settingsOptions]: (typeof settingsOptions)[K] extends Options.Options<infer A> ? A : never
} & { readonly logLevel?: never }

/** The flags the user gave, as raw text for the settings loader, plus the config file flag. */
const rawFromOptions = (parsed: ParsedOptions): { flags: RawSettings; configFlag: string | undefined } => {
  const flags: RawSettings = {}
  const logLevel = logLevelFromArgv(process.argv)
  if (logLevel !== undefined) flags.logLevel = logLevel
  for (const key of Object.keys(settingNames) as Array<SettingKey>) {
    if (key === "logLevel") continue
    if (key === "stream") {
      if (Option.isSome(parsed.stream) && parsed.stream.value) flags.stream = "false"
      continue
    }
    if (key === "checkModels" || key === "resourceLinks") {
      const flag = parsed[key]
      if (Option.isSome(flag) && flag.value) flags[key] = "true"
      continue
    }
    const value: Option.Option<string> | ReadonlyArray<string> = parsed[key]
    if (Array.isArray(value)) {
      if (value.length > 0) flags[key] = value.join(",")
    } else if (Option.isOption(value) && Option.isSome(value)) {
      flags[key] = value.value
    }
  }
  return { flags, configFlag: Option.getOrUndefined(parsed.config) }
}

export type SettingsFlags = ParsedOptions

/**
 * A command's settings from its parsed options, the environment and the config file, with the raw flags
 * (for a command that must tell a flag from a default).
 */
export const settingsFromOptions = (parsed: ParsedOptions, options: { readonly requireApiKey?: boolean } = {}) => {
  const raw = rawFromOptions(parsed)
  return loadSettings({ ...raw, env: process.env, ...options }).pipe(Effect.map((loaded) => ({ ...loaded, ...raw })))
}
