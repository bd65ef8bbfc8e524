import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Option, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { SettingsError } from "../../src/domain/errors.js"
import { describeSettings } from "../../src/settings/describe.js"
import { loadSettings, MAX_CONFIG_FILE_BYTES } from "../../src/settings/load.js"
import { defaultOutputDir, isLoopbackUrl } from "../../src/settings/paths.js"
import { patchSettings, perCallKeys } from "../../src/settings/perCall.js"
import type { AnySetting } from "../../src/settings/setting.js"
import { settingKeys, settingsTable } from "../../src/settings/table.js"
import { DEFAULT_BASE_URL, DEFAULT_FALLBACK_SYNTHESIZERS, DEFAULT_MODELS, DEFAULT_SYNTHESIZER } from "../../src/settings/table/models.js"
import type { RawSettings } from "../../src/settings/values.js"
import { itLive } from "../support/itLive.js"
import { tempRoot } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

const KEY = "sk-or-v1-SETTINGS-SECRET-0123456789abcdef"

const { root: tmp } = tempRoot("pllm-settings-")
let fileCounter = 0
/** Writes a config file (JSON value, or raw text) into the temp dir and returns its absolute path. */
const configFile = (content: unknown): string => {
  const file = path.join(tmp, `config-${++fileCounter}.json`)
  fs.writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content))
  return file
}

interface Input {
  readonly flags?: RawSettings
  readonly configFlag?: string
  readonly env?: Readonly<Record<string, string | undefined>>
}

/**
 * Where the default per-user config file is looked for: an empty directory, so that a config file in
 * the real home directory of whoever runs the tests cannot change their outcome.
 */
const emptyConfigHome = path.join(tmp, "empty-config-home")
fs.mkdirSync(emptyConfigHome)
const hermetic = { XDG_CONFIG_HOME: emptyConfigHome, APPDATA: emptyConfigHome }

/** loadSettings with a key in the environment unless the test says otherwise. */
const load = (input: Input = {}) =>
  loadSettings({
    flags: input.flags ?? {},
    configFlag: input.configFlag,
    env: { ...hermetic, ...(input.env ?? { OPENROUTER_API_KEY: KEY }) }
  }).pipe(Effect.provide(NodeFileSystem.layer))

/** The SettingsError a bad input must produce. */
const loadError = (input: Input) =>
  load(input).pipe(
    Effect.flip,
    Effect.tap((e) => Effect.sync(() => expect(e).toBeInstanceOf(SettingsError)))
  )

describe("loadSettings: defaults", () => {
  itLive.effect("every setting has its documented default", () =>
    Effect.gen(function*() {
      const { settings, sources } = yield* load()
      expect(settings.baseUrl).toBe(DEFAULT_BASE_URL)
      expect(settings.baseUrl).toBe("https://openrouter.ai/api/v1")
      expect(settings.models).toEqual(DEFAULT_MODELS)
      expect(settings.models).toHaveLength(5)
      expect(new Set(settings.models).size).toBe(5)
      expect(settings.synthesizer).toBe(DEFAULT_SYNTHESIZER)
      expect(settings.synthesizer.length).toBeGreaterThan(0)
      expect(settings.fallbackSynthesizers).toEqual(DEFAULT_FALLBACK_SYNTHESIZERS)
      expect(settings.fallbackSynthesizers.length).toBeGreaterThanOrEqual(1)
      expect(settings.fallbackSynthesizers).not.toContain(settings.synthesizer)
      expect(settings.concurrency).toBe(5)
      expect(settings.timeoutMs).toBe(240_000)
      expect(settings.retries).toBe(3)
      expect(settings.temperature).toBe(0.7)
      expect(Option.isNone(settings.maxTokens)).toBe(true)
      expect(settings.logLevel).toBe("info")
      expect(Option.isNone(settings.logFile)).toBe(true)
      expect(Option.isNone(settings.configFile)).toBe(true)
      expect(Option.map(settings.apiKey, Redacted.value)).toEqual(Option.some(KEY))
      for (const source of Object.values(sources)) expect(source).toBe("default")
    }))

  itLive.effect("the default output directory is the per-user data directory, never the working directory", () =>
    Effect.gen(function*() {
      const { settings } = yield* load()
      expect(settings.outputDir).toBe(defaultOutputDir({}))
      expect(path.isAbsolute(settings.outputDir)).toBe(true)
      expect(settings.outputDir).not.toBe(process.cwd())
      expect(settings.outputDir.startsWith(`${process.cwd()}${path.sep}`)).toBe(false)
      if (process.platform === "linux") {
        expect(settings.outputDir).toBe(path.join(os.homedir(), ".local", "share", "parallel-llm-mcp", "runs"))
      }
      // XDG_DATA_HOME (from the env given to the loader) moves it on Linux.
      const xdg = path.join(tmp, "xdg")
      const withXdg = yield* load({ env: { OPENROUTER_API_KEY: KEY, XDG_DATA_HOME: xdg } })
      expect(withXdg.settings.outputDir).toBe(defaultOutputDir({ XDG_DATA_HOME: xdg }))
      if (process.platform === "linux") expect(withXdg.settings.outputDir).toBe(path.join(xdg, "parallel-llm-mcp", "runs"))
    }))

  itLive.effect("a whitespace-only or empty key counts as no key; empty environment values are ignored", () =>
    Effect.gen(function*() {
      const error = yield* loadError({ env: { OPENROUTER_API_KEY: "   " } })
      expect(error.message).toContain("OPENROUTER_API_KEY")
      const { settings, sources } = yield* load({ env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_CONCURRENCY: "", PARALLEL_LLM_MODELS: "" } })
      expect(settings.concurrency).toBe(5)
      expect(settings.models).toEqual(DEFAULT_MODELS)
      expect(sources.concurrency).toBe("default")
    }))

  itLive.effect(
    "a key is required for OpenRouter's own URL only; another server gets no OpenRouter fallback synthesizer",
    () =>
      Effect.gen(function*() {
        const error = yield* loadError({ env: { OPENROUTER_API_KEY: undefined } })
        expect(error.message).toContain("OPENROUTER_API_KEY is not set")
        const openRouter = yield* load({ env: { OPENROUTER_API_KEY: KEY } })
        expect(openRouter.settings.fallbackSynthesizers).toEqual(DEFAULT_FALLBACK_SYNTHESIZERS)
        for (const baseUrl of ["http://gpu-box.lan:11434/v1", "https://vllm.example.com/v1"]) {
          const other = yield* load({ flags: { baseUrl }, env: { OPENROUTER_API_KEY: undefined } })
          expect(Option.isNone(other.settings.apiKey), baseUrl).toBe(true)
          expect(other.settings.fallbackSynthesizers, baseUrl).toEqual([])
          // One the user chose is kept.
          const chosen = yield* load({ flags: { baseUrl, fallbackSynthesizers: "llama3.1:8b" }, env: { OPENROUTER_API_KEY: undefined } })
          expect(chosen.settings.fallbackSynthesizers).toEqual(["llama3.1:8b"])
        }
      })
  )

  itLive.effect(
    "a panel of CLI agents only needs no key and gets no OpenRouter fallback synthesizer, unless one is named",
    () =>
      Effect.gen(function*() {
        const agents = { models: "claude-code/sonnet,codex/gpt-5", synthesizer: "claude-code/opus" }
        // With a key in the environment too: a CLI synthesizer's failure must not turn into a paid OpenRouter call.
        for (const env of [{ OPENROUTER_API_KEY: undefined }, { OPENROUTER_API_KEY: KEY }]) {
          const { settings } = yield* load({ flags: agents, env })
          expect(settings.fallbackSynthesizers).toEqual([])
        }
        const chosen = yield* load({
          flags: { ...agents, fallbackSynthesizers: "gemini-cli/gemini-2.5-pro" },
          env: { OPENROUTER_API_KEY: undefined }
        })
        expect(chosen.settings.fallbackSynthesizers).toEqual(["gemini-cli/gemini-2.5-pro"])
        // One API model in the panel: OpenRouter is used, and so is its default fallback.
        const mixed = yield* load({ flags: { ...agents, models: "claude-code/sonnet,openai/gpt-4o-mini" } })
        expect(mixed.settings.fallbackSynthesizers).toEqual(DEFAULT_FALLBACK_SYNTHESIZERS)
      })
  )

  itLive.effect("an MCP Bundle placeholder left unfilled (`${user_config.models}`) counts as not set", () =>
    Effect.gen(function*() {
      const { settings, sources } = yield* load({
        env: {
          OPENROUTER_API_KEY: KEY,
          PARALLEL_LLM_MODELS: "${user_config.models}",
          PARALLEL_LLM_SYNTHESIZER: "${user_config.synthesizer}"
        }
      })
      expect(settings.models).toEqual(DEFAULT_MODELS)
      expect(sources.models).toBe("default")
      expect(sources.synthesizer).toBe("default")
    }))
})

describe("loadSettings: precedence flag > env > file > default", () => {
  itLive.effect("concurrency, timeout, retries, temperature, models and synthesizer, with their sources", () =>
    Effect.gen(function*() {
      const file = configFile({
        concurrency: 4,
        timeout: 30,
        retries: 1,
        temperature: 0.1,
        models: ["file/one", "file/two"],
        synthesizer: "file/synth"
      })
      const env = {
        OPENROUTER_API_KEY: KEY,
        PARALLEL_LLM_CONCURRENCY: "6",
        PARALLEL_LLM_TIMEOUT: "60",
        PARALLEL_LLM_RETRIES: "2",
        PARALLEL_LLM_MODELS: "env/one,env/two,env/three",
        PARALLEL_LLM_SYNTHESIZER: "env/synth"
      }
      const flags: RawSettings = { concurrency: "7", models: "flag/one", temperature: "1.5" }

      const all = yield* load({ flags, configFlag: file, env })
      expect(all.settings.concurrency).toBe(7)
      expect(all.sources.concurrency).toBe("flag")
      expect(all.settings.models).toEqual(["flag/one"])
      expect(all.sources.models).toBe("flag")
      expect(all.settings.temperature).toBe(1.5)
      expect(all.sources.temperature).toBe("flag")
      expect(all.settings.timeoutMs).toBe(60_000)
      expect(all.sources.timeout).toBe("env")
      expect(all.settings.retries).toBe(2)
      expect(all.sources.retries).toBe("env")
      expect(all.settings.synthesizer).toBe("env/synth")
      expect(all.sources.synthesizer).toBe("env")
      expect(all.sources.baseUrl).toBe("default")
      expect(all.settings.configFile).toEqual(Option.some(file))

      const noFlags = yield* load({ configFlag: file, env })
      expect(noFlags.settings.concurrency).toBe(6)
      expect(noFlags.sources.concurrency).toBe("env")
      expect(noFlags.settings.models).toEqual(["env/one", "env/two", "env/three"])
      expect(noFlags.settings.temperature).toBe(0.1)
      expect(noFlags.sources.temperature).toBe("file")

      const fileOnly = yield* load({ configFlag: file })
      expect(fileOnly.settings.concurrency).toBe(4)
      expect(fileOnly.sources.concurrency).toBe("file")
      expect(fileOnly.settings.timeoutMs).toBe(30_000)
      expect(fileOnly.settings.retries).toBe(1)
      expect(fileOnly.settings.models).toEqual(["file/one", "file/two"])
      expect(fileOnly.settings.synthesizer).toBe("file/synth")
      expect(fileOnly.sources.synthesizer).toBe("file")

      const none = yield* load()
      expect(none.settings.concurrency).toBe(5)
      expect(none.sources.concurrency).toBe("default")
    }))

  itLive.effect("the base URL and the key: flag over env, trailing slashes dropped", () =>
    Effect.gen(function*() {
      const { settings, sources } = yield* load({
        flags: { baseUrl: "http://127.0.0.1:1234/v1/" },
        env: { OPENROUTER_API_KEY: KEY, OPENROUTER_BASE_URL: "http://localhost:9999/api/v1" }
      })
      expect(settings.baseUrl).toBe("http://127.0.0.1:1234/v1")
      expect(sources.baseUrl).toBe("flag")
      const fromEnv = yield* load({ env: { OPENROUTER_API_KEY: KEY, OPENROUTER_BASE_URL: "http://localhost:9999/api/v1//" } })
      expect(fromEnv.settings.baseUrl).toBe("http://localhost:9999/api/v1")
      expect(fromEnv.sources.baseUrl).toBe("env")
    }))

  itLive.effect("--config wins over PARALLEL_LLM_CONFIG; PARALLEL_LLM_CONFIG alone is read", () =>
    Effect.gen(function*() {
      const a = configFile({ retries: 7 })
      const b = configFile({ retries: 9 })
      const both = yield* load({ configFlag: a, env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_CONFIG: b } })
      expect(both.settings.retries).toBe(7)
      expect(both.settings.configFile).toEqual(Option.some(a))
      const envOnly = yield* load({ env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_CONFIG: b } })
      expect(envOnly.settings.retries).toBe(9)
      expect(envOnly.sources.retries).toBe("file")
    }))

  itLive.effect("the per-user default config file is read when no other is named (and --config replaces it)", () =>
    Effect.gen(function*() {
      const configHome = path.join(tmp, "xdg-config")
      fs.mkdirSync(path.join(configHome, "parallel-llm-mcp"), { recursive: true })
      const file = path.join(configHome, "parallel-llm-mcp", "config.json")
      fs.writeFileSync(file, JSON.stringify({ retries: 6 }))
      if (process.platform === "linux") {
        const viaDefault = yield* load({ env: { OPENROUTER_API_KEY: KEY, XDG_CONFIG_HOME: configHome } })
        expect(viaDefault.settings.retries).toBe(6)
        expect(viaDefault.sources.retries).toBe("file")
        expect(viaDefault.settings.configFile).toEqual(Option.some(file))
      }
      const named = yield* load({
        configFlag: configFile({ concurrency: 2 }),
        env: { OPENROUTER_API_KEY: KEY, XDG_CONFIG_HOME: configHome }
      })
      expect(named.settings.retries).toBe(3)
      expect(named.settings.concurrency).toBe(2)
    }))

  itLive.effect("an invalid flag fails even when the environment has a valid value (no silent fallback)", () =>
    Effect.gen(function*() {
      const error = yield* loadError({ flags: { concurrency: "abc" }, env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_CONCURRENCY: "6" } })
      expect(error.setting).toBe("--concurrency")
      expect(error.message).toContain("--concurrency")
    }))
})

describe("loadSettings: lists", () => {
  itLive.effect("comma-separated models from the environment, trimmed, empty items dropped", () =>
    Effect.gen(function*() {
      const { settings } = yield* load({ env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_MODELS: " a/one, b/two ,,c/three:free " } })
      expect(settings.models).toEqual(["a/one", "b/two", "c/three:free"])
    }))

  itLive.effect("models in a config file as an array or as a comma-separated string", () =>
    Effect.gen(function*() {
      const asArray = yield* load({ configFlag: configFile({ models: ["x/one", "y/two"] }) })
      expect(asArray.settings.models).toEqual(["x/one", "y/two"])
      const asString = yield* load({ configFlag: configFile({ models: "x/one,y/two" }) })
      expect(asString.settings.models).toEqual(["x/one", "y/two"])
    }))

  itLive.effect(
    "`none` turns the fallback synthesizers off (flag, env, file, or an empty array in the file)",
    () =>
      Effect.gen(function*() {
        const viaEnv = yield* load({ env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none" } })
        expect(viaEnv.settings.fallbackSynthesizers).toEqual([])
        const viaFlag = yield* load({ flags: { fallbackSynthesizers: "NONE" } })
        expect(viaFlag.settings.fallbackSynthesizers).toEqual([])
        const viaFile = yield* load({ configFlag: configFile({ fallbackSynthesizers: "none" }) })
        expect(viaFile.settings.fallbackSynthesizers).toEqual([])
        const emptyArray = yield* load({ configFlag: configFile({ fallbackSynthesizers: [] }) })
        expect(emptyArray.settings.fallbackSynthesizers).toEqual([])
        // An empty array is no value of its own in any list: no directory called "none", no model called "none".
        const noDirs = yield* load({ configFlag: configFile({ allowDirs: [] }) })
        expect(noDirs.settings.allowDirs).toEqual([])
        const noModels = yield* loadError({ configFlag: configFile({ models: [] }) })
        expect(noModels.message).toContain("needs at least one model")
        const two = yield* load({ env: { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "f/one,f/two" } })
        expect(two.settings.fallbackSynthesizers).toEqual(["f/one", "f/two"])
      })
  )
})

describe("loadSettings: conversions", () => {
  itLive.effect("seconds become milliseconds; max tokens; paths are absolute with ~ expanded", () =>
    Effect.gen(function*() {
      const { settings } = yield* load({
        flags: {
          timeout: "1.5",
          retryBaseDelay: "0.01",
          maxTokens: "100",
          outputDir: "~/pllm-runs",
          logFile: "~/pllm.log",
          logLevel: "debug"
        }
      })
      expect(settings.timeoutMs).toBe(1500)
      expect(settings.retryBaseDelayMs).toBe(10)
      expect(settings.maxTokens).toEqual(Option.some(100))
      expect(settings.outputDir).toBe(path.join(os.homedir(), "pllm-runs"))
      expect(settings.logFile).toEqual(Option.some(path.join(os.homedir(), "pllm.log")))
      expect(settings.logLevel).toBe("debug")
      const relative = yield* load({ flags: { outputDir: "some/runs" } })
      expect(relative.settings.outputDir).toBe(path.resolve("some/runs"))
    }))
})

describe("loadSettings: invalid values name where they came from", () => {
  const flagCases: ReadonlyArray<readonly [string, RawSettings, string]> = [
    ["--concurrency abc", { concurrency: "abc" }, "--concurrency"],
    ["--concurrency 0", { concurrency: "0" }, "--concurrency"],
    ["--concurrency 1.5", { concurrency: "1.5" }, "--concurrency"],
    ["--timeout -1", { timeout: "-1" }, "--timeout"],
    ["--retries -1", { retries: "-1" }, "--retries"],
    ["--temperature 3", { temperature: "3" }, "--temperature"],
    ["--max-tokens 0", { maxTokens: "0" }, "--max-tokens"],
    ["--model 'bad id'", { models: "bad id" }, "--model"],
    ["--synthesizer /x", { synthesizer: "/x" }, "--synthesizer"],
    ["--base-url ftp://x", { baseUrl: "ftp://example.com" }, "--base-url"],
    ["--base-url not a url", { baseUrl: "not a url" }, "--base-url"],
    ["--log-level verbose", { logLevel: "verbose" }, "--log-level"]
  ]
  for (const [name, flags, expected] of flagCases) {
    itLive.effect(`flag: ${name}`, () =>
      Effect.gen(function*() {
        const error = yield* loadError({ flags })
        expect(error.setting).toBe(expected)
        expect(error.message.startsWith(`${expected}:`)).toBe(true)
        expect(error.message).not.toMatch(/\n/)
      }))
  }

  const envCases: ReadonlyArray<readonly [string, string]> = [
    ["PARALLEL_LLM_TIMEOUT", "-1"],
    ["PARALLEL_LLM_TIMEOUT", "soon"],
    ["PARALLEL_LLM_CONCURRENCY", "5000"],
    ["PARALLEL_LLM_RETRIES", "2.5"],
    ["PARALLEL_LLM_TEMPERATURE", "hot"],
    ["PARALLEL_LLM_MODELS", "good/one,bad model"],
    ["PARALLEL_LLM_LOG_LEVEL", "loud"],
    ["OPENROUTER_BASE_URL", "openrouter.ai"]
  ]
  for (const [variable, value] of envCases) {
    itLive.effect(`env: ${variable}=${value}`, () =>
      Effect.gen(function*() {
        const error = yield* loadError({ env: { OPENROUTER_API_KEY: KEY, [variable]: value } })
        expect(error.setting).toBe(variable)
        expect(error.message.startsWith(`${variable}:`)).toBe(true)
        expect(error.message).not.toMatch(/\n/)
      }))
  }

  itLive.effect("file: a value out of range names the key and the file", () =>
    Effect.gen(function*() {
      const file = configFile({ temperature: 5 })
      const error = yield* loadError({ configFlag: file })
      expect(error.message).toContain("temperature")
      expect(error.message).toContain(file)
    }))

  itLive.effect("file: an invalid model id names the key and the file", () =>
    Effect.gen(function*() {
      const file = configFile({ models: ["ok/one", "not ok"] })
      const error = yield* loadError({ configFlag: file })
      expect(error.message).toContain("models")
      expect(error.message).toContain(file)
    }))

  itLive.effect("file: a wrong type names the key and the file", () =>
    Effect.gen(function*() {
      const file = configFile({ concurrency: "five" })
      const error = yield* loadError({ configFlag: file })
      expect(error.message).toContain("concurrency")
      expect(error.message).toContain(file)
    }))

  itLive.effect("file: an unknown key names the key and the file", () =>
    Effect.gen(function*() {
      const file = configFile({ modelz: ["a/b"] })
      const error = yield* loadError({ configFlag: file })
      expect(error.message).toContain("modelz")
      expect(error.message).toContain(file)
    }))

  itLive.effect("file: the API key is not accepted in a config file (it is a secret; environment only)", () =>
    Effect.gen(function*() {
      const file = configFile({ apiKey: KEY })
      const error = yield* loadError({ configFlag: file })
      expect(error.message).toContain("apiKey")
      expect(error.message).not.toContain(KEY)
    }))

  itLive.effect("file: not JSON, or missing, names the file", () =>
    Effect.gen(function*() {
      const broken = configFile("{ not json")
      const e1 = yield* loadError({ configFlag: broken })
      expect(e1.message).toContain(broken)
      const missing = path.join(tmp, "does-not-exist.json")
      const e2 = yield* loadError({ configFlag: missing })
      expect(e2.message).toContain(missing)
    }))

  // The contract wants a one-line reason on stderr; the CLI prints SettingsError.message as it is.
  itLive.effect("file: every config-file error message is one line", () =>
    Effect.gen(function*() {
      for (const content of [{ concurrency: "five" }, { modelz: 1 }, "{ not json", { temperature: 5 }]) {
        const error = yield* loadError({ configFlag: configFile(content) })
        expect(error.message.includes("\n"), `a multi-line message: ${error.message.slice(0, 160)}…`).toBe(false)
      }
    }))
})

describe("loadSettings: the API key", () => {
  itLive.effect(
    "missing for OpenRouter's own URL fails naming OPENROUTER_API_KEY; another server needs none",
    () =>
      Effect.gen(function*() {
        const defaultUrl = yield* loadError({ env: {} })
        expect(defaultUrl.setting).toBe("OPENROUTER_API_KEY")
        expect(defaultUrl.message).toContain("OPENROUTER_API_KEY")
        const openRouter = yield* loadError({ env: { OPENROUTER_BASE_URL: "https://eu.openrouter.ai/api/v1" } })
        expect(openRouter.message).toContain("OPENROUTER_API_KEY")
        const remote = yield* load({ env: { OPENROUTER_BASE_URL: "https://llm.example.com/v1" } })
        expect(Option.isNone(remote.settings.apiKey)).toBe(true)
        const remoteFlag = yield* load({ flags: { baseUrl: "http://192.168.1.10:11434/v1" }, env: {} })
        expect(Option.isNone(remoteFlag.settings.apiKey)).toBe(true)
      })
  )

  itLive.effect("a loopback URL (127.0.0.1, localhost, [::1]) needs no key", () =>
    Effect.gen(function*() {
      for (const url of ["http://127.0.0.1:11434/v1", "http://127.1.2.3:8080", "http://localhost:1234/v1", "http://[::1]:11434/v1"]) {
        const { settings } = yield* load({ flags: { baseUrl: url }, env: {} })
        expect(Option.isNone(settings.apiKey)).toBe(true)
        expect(settings.baseUrl).toBe(url.replace(/\/+$/, ""))
      }
      const viaEnv = yield* load({ env: { OPENROUTER_BASE_URL: "http://localhost:11434/v1" } })
      expect(Option.isNone(viaEnv.settings.apiKey)).toBe(true)
    }))

  it("isLoopbackUrl", () => {
    expect(isLoopbackUrl("http://127.0.0.1:1/x")).toBe(true)
    expect(isLoopbackUrl("http://localhost/x")).toBe(true)
    expect(isLoopbackUrl("http://[::1]:80/x")).toBe(true)
    expect(isLoopbackUrl("https://openrouter.ai/api/v1")).toBe(false)
    expect(isLoopbackUrl("http://localhost.example.com/v1")).toBe(false)
    expect(isLoopbackUrl("http://10.0.0.1/v1")).toBe(false)
  })

  itLive.effect("describeSettings never contains the key, and says whether one is set", () =>
    Effect.gen(function*() {
      const { settings } = yield* load({ flags: { logFile: path.join(tmp, "x.log") }, configFlag: configFile({ retries: 2 }) })
      const described = describeSettings(settings)
      const text = JSON.stringify(described)
      expect(text).not.toContain(KEY)
      expect(text).not.toContain(KEY.slice(10))
      expect(described.apiKey).toBe("<redacted>")
      expect(described.retries).toBe(2)
      // Neither does the settings value when printed or serialised by accident.
      expect(JSON.stringify(settings)).not.toContain(KEY)
      expect(String(Option.getOrThrow(settings.apiKey))).not.toContain(KEY)
      const noKey = yield* load({ flags: { baseUrl: "http://127.0.0.1:1/v1" }, env: {} })
      expect(describeSettings(noKey.settings).apiKey).toBe("<not set>")
    }))
})

describe("defaultOutputDir", () => {
  const home = "/home/ada"
  it("linux with and without XDG_DATA_HOME (a relative one is ignored)", () => {
    expect(defaultOutputDir({}, "linux", home)).toBe(path.join(home, ".local", "share", "parallel-llm-mcp", "runs"))
    expect(defaultOutputDir({ XDG_DATA_HOME: "/data/ada" }, "linux", home)).toBe(path.join("/data/ada", "parallel-llm-mcp", "runs"))
    expect(defaultOutputDir({ XDG_DATA_HOME: "relative/dir" }, "linux", home)).toBe(
      path.join(home, ".local", "share", "parallel-llm-mcp", "runs")
    )
    expect(defaultOutputDir({ XDG_DATA_HOME: "" }, "linux", home)).toBe(path.join(home, ".local", "share", "parallel-llm-mcp", "runs"))
  })
  it("darwin", () => {
    expect(defaultOutputDir({ XDG_DATA_HOME: "/ignored" }, "darwin", home)).toBe(
      path.join(home, "Library", "Application Support", "parallel-llm-mcp", "runs")
    )
  })
  it("win32 with and without LOCALAPPDATA", () => {
    expect(defaultOutputDir({ LOCALAPPDATA: "C:/Users/ada/AppData/Local" }, "win32", home)).toBe(
      path.join("C:/Users/ada/AppData/Local", "parallel-llm-mcp", "runs")
    )
    expect(defaultOutputDir({}, "win32", home)).toBe(path.join(home, "AppData", "Local", "parallel-llm-mcp", "runs"))
  })
  it("never the working directory", () => {
    for (const platform of ["linux", "darwin", "win32"] as const) {
      const dir = defaultOutputDir({}, platform, home)
      expect(dir).not.toBe(process.cwd())
      expect(dir.endsWith(path.join("parallel-llm-mcp", "runs"))).toBe(true)
    }
  })
})

describe("loadSettings: the config file's paths, size, and URLs with credentials", () => {
  itLive.effect(
    "relative paths in a config file resolve against the file's own directory; on the command line, the working directory",
    () =>
      Effect.gen(function*() {
        const dir = path.join(tmp, "nested", "conf")
        fs.mkdirSync(dir, { recursive: true })
        const file = path.join(dir, "config.json")
        fs.writeFileSync(file, JSON.stringify({ outputDir: "runs", logFile: "../logs/pllm.log" }))
        const { settings } = yield* load({ configFlag: file })
        expect(settings.outputDir).toBe(path.join(dir, "runs"))
        expect(settings.logFile).toEqual(Option.some(path.join(tmp, "nested", "logs", "pllm.log")))
        const overridden = yield* load({ configFlag: file, flags: { outputDir: "runs" } })
        expect(overridden.settings.outputDir).toBe(path.resolve("runs"))
      })
  )

  itLive.effect(
    "a config file past the size cap is refused with its size named, without reading it all (/dev/zero)",
    () =>
      Effect.gen(function*() {
        const big = configFile(`{"retries": 1${" ".repeat(MAX_CONFIG_FILE_BYTES)}}`)
        const error = yield* loadError({ configFlag: big })
        expect(error.message).toContain(big)
        expect(error.message).toContain(`larger than ${MAX_CONFIG_FILE_BYTES} bytes`)
        if (fs.existsSync("/dev/zero")) {
          const zero = yield* loadError({ configFlag: "/dev/zero" })
          expect(zero.message).toContain("/dev/zero")
        }
      })
  )

  itLive.effect("a base URL with a user name or password is refused, and the password is never printed", () =>
    Effect.gen(function*() {
      const secret = "hunter2-url-password"
      const viaFlag = yield* loadError({ flags: { baseUrl: `https://user:${secret}@llm.example.com/v1` } })
      expect(viaFlag.setting).toBe("--base-url")
      expect(viaFlag.message).not.toContain(secret)
      const viaEnv = yield* loadError({ env: { OPENROUTER_API_KEY: KEY, OPENROUTER_BASE_URL: `http://user:${secret}@127.0.0.1:1/v1` } })
      expect(viaEnv.setting).toBe("OPENROUTER_BASE_URL")
      expect(viaEnv.message).not.toContain(secret)
      const viaFile = yield* loadError({ configFlag: configFile({ baseUrl: `http://${secret}@localhost:1/v1` }) })
      expect(viaFile.message).toContain("baseUrl")
      expect(viaFile.message).not.toContain(secret)
      // Not a URL at all, credentials and all: the message still leaves them out.
      const broken = yield* loadError({ flags: { baseUrl: `ftp://user:${secret}@example.com` } })
      expect(broken.message).not.toContain(secret)
    }))
})

describe("the settings table", () => {
  it("every setting has its own flag, environment variable and field; describeSettings shows each of them", () => {
    const entries = Object.entries(settingsTable)
    for (
      const pick of [
        (e: (typeof entries)[number]) => e[1].flag,
        (e: (typeof entries)[number]) => e[1].env,
        (e: (typeof entries)[number]) => e[1].field
      ]
    ) {
      expect(new Set(entries.map(pick)).size).toBe(entries.length)
    }
  })

  // The loader reads only what some layer sets; every other setting takes its `unset` value, which must be what
  // reading it through Config would give (its default, converted, or none).
  itLive.effect("a setting nothing sets takes its unset value: what Config reads from a provider without it", () =>
    Effect.gen(function*() {
      const ctx = { env: { XDG_CONFIG_HOME: "/xdg" }, home: "/home/someone", baseDir: "/work/here" }
      for (const key of settingKeys) {
        const setting: AnySetting = settingsTable[key]
        const read = yield* Effect.withConfigProvider(setting.config(key, ctx), ConfigProvider.fromMap(new Map()))
        expect(setting.unset(ctx), key).toEqual(read)
      }
    }))

  it("the per-call settings are the table's perCall entries; a call's values patch Settings, in the user's units", () => {
    expect([...perCallKeys].sort()).toEqual([
      "deadline",
      "grace",
      "models",
      "preset",
      "quorum",
      "rounds",
      "samples",
      "strategy",
      "synthesizer",
      "web"
    ])
    const patch = (values: Parameters<typeof patchSettings>[1]) => patchSettings(makeTestSettings(), values)
    const patched = Either.getOrThrow(patch({ deadline: 30, quorum: 2, grace: 1.5, models: [" a/one "], web: true }))
    expect(patched.deadlineMs).toEqual(Option.some(30_000))
    expect(patched.quorum).toEqual(Option.some(2))
    expect(patched.graceMs).toBe(1_500)
    expect(patched.models).toEqual(["a/one"])
    expect(patched.web).toBe(true)
    expect(patch({ quorum: 17 })).toEqual(Either.left("quorum: Expected a number between 1 and 16, actual 17"))
    for (const bad of [{ quorum: 1.5 }, { deadline: 0 }, { grace: -1 }, { rounds: 6 }, { samples: 17 }, { models: [] }]) {
      expect(Either.getLeft(patch(bad)).pipe(Option.getOrElse(() => "")), JSON.stringify(bad)).toMatch(
        new RegExp(`^${Object.keys(bad)[0]}: `)
      )
    }
    expect(patch({ synthesizer: "not a model" })).toEqual(Either.left(expect.stringMatching(/^synthesizer: .*is not a model id/)))
  })
})
