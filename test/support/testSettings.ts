import { Layer, Option, Redacted } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"

/** Settings for tests and in-process use: defaults plus overrides, no key needed on loopback. */
export const makeTestSettings = (overrides: Partial<SettingsValue> = {}): SettingsValue => ({
  apiKey: Option.some(Redacted.make("sk-or-test-key")),
  baseUrl: "http://127.0.0.1:9/api/v1",
  models: ["test/alpha", "test/beta", "test/gamma"],
  synthesizer: "test/synth",
  fallbackSynthesizers: [],
  preset: Option.none(),
  concurrency: 5,
  timeoutMs: 240_000,
  retries: 3,
  retryBaseDelayMs: 1000,
  temperature: 0.7,
  maxTokens: Option.none(),
  reasoning: Option.none(),
  web: false,
  webMaxResults: Option.none(),
  webMaxUses: Option.none(),
  webEngine: Option.none(),
  webDomains: Option.none(),
  webExcludeDomains: Option.none(),
  cacheTtl: 0,
  synthesisMaxChars: 400_000,
  contextMaxChars: 200_000,
  followUpMaxTurns: 50,
  deadlineMs: Option.none(),
  synthesisReserveMs: Option.none(),
  quorum: Option.none(),
  graceMs: 0,
  maxResponseBytes: 4 * 1024 * 1024,
  maxPromptChars: 2_000_000,
  stream: false,
  checkModels: false,
  maxCost: Option.none(),
  maxModels: 16,
  maxInFlight: 16,
  cliAgentConcurrency: 2,
  codexConfig: [],
  strategy: "synthesize",
  judges: Option.none(),
  rounds: 1,
  samples: 4,
  reportVia: "text",
  outputDir: path.join(os.tmpdir(), "parallel-llm-test-runs"),
  logLevel: "info",
  logFile: Option.none(),
  appUrl: "https://example.test",
  appTitle: "parallel-llm-mcp",
  mcpWaitMs: 45_000,
  resourceLinks: false,
  httpMaxSessions: 64,
  httpSessionIdleMs: 1_800_000,
  httpMaxBodyBytes: 1024 * 1024,
  httpAllowedOrigins: [],
  attachMaxBytes: 10 * 1024 * 1024,
  attachMaxTotalBytes: 30 * 1024 * 1024,
  attachMaxFiles: 1_000,
  allowDirs: [],
  traceContent: false,
  configFile: Option.none(),
  modelOptions: {},
  presets: {},
  ...overrides
})

/** The Settings service's test layer. */
export const layerTestSettings = (overrides: Partial<SettingsValue> = {}): Layer.Layer<Settings> =>
  Settings.Test(makeTestSettings(overrides))
