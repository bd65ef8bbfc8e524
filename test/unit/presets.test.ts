import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SettingsError } from "../../src/domain/errors.js"
import { loadSettings } from "../../src/settings/load.js"
import type { RawSettings } from "../../src/settings/values.js"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess, type InProcessConnection } from "../support/inProcessMcp.js"
import { serverEnv } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"

// Presets: named panels in the config file. Through the real loader (temp files), the command line and the MCP server
// (both in-process) against the loopback fake.

const { root: tmp } = tempRoot("pllm-presets-")
const emptyConfigHome = path.join(tmp, "empty-config-home")
fs.mkdirSync(emptyConfigHome)

let files = 0
const configFile = (content: unknown): string => {
  const file = path.join(tmp, `config-${++files}.json`)
  fs.writeFileSync(file, JSON.stringify(content))
  return file
}

const PANELS = {
  models: ["file/one", "file/two"],
  synthesizer: "file/synth",
  quorum: 2,
  presets: {
    fast: { models: ["fast/a", "fast/b"], synthesizer: "fast/synth", deadline: 30, fallbackSynthesizers: [] },
    deep: { models: ["deep/x", "deep/y", "deep/z"], grace: 5 }
  }
}

const load = (file: string | undefined, flags: RawSettings = {}, env: Record<string, string> = {}) =>
  loadSettings({
    flags,
    configFlag: file,
    env: { XDG_CONFIG_HOME: emptyConfigHome, APPDATA: emptyConfigHome, OPENROUTER_API_KEY: "k", ...env }
  }).pipe(Effect.provide(NodeFileSystem.layer))

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
/** The refusal's message; settings that load anyway fail the test plainly (their Effect values are not printed). */
const refusal = async (effect: Effect.Effect<unknown, SettingsError>): Promise<string> => {
  const result = await run(Effect.either(effect))
  if (Either.isRight(result)) throw new Error("expected a refusal, but the settings loaded")
  expect(result.left).toBeInstanceOf(SettingsError)
  return result.left.message
}

describe("presets through the loader", () => {
  it("no preset: the file's top level; a preset in the file: its values over the file's, the rest untouched", async () => {
    const plain = await run(load(configFile(PANELS)))
    expect(plain.settings.models).toEqual(["file/one", "file/two"])
    expect(Option.getOrNull(plain.settings.preset)).toBeNull()
    expect(Object.keys(plain.settings.presets)).toEqual(["fast", "deep"])

    const chosen = await run(load(configFile({ ...PANELS, preset: "fast" })))
    expect(chosen.settings.models).toEqual(["fast/a", "fast/b"])
    expect(chosen.settings.synthesizer).toBe("fast/synth")
    expect(chosen.settings.deadlineMs).toEqual(Option.some(30_000))
    expect(chosen.settings.fallbackSynthesizers).toEqual([])
    expect(chosen.settings.quorum).toEqual(Option.some(2))
    expect(chosen.sources.models).toBe("preset")
    expect(chosen.sources.quorum).toBe("file")
    expect(chosen.sources.preset).toBe("file")
  })

  it("flag > environment > file for the preset's name; flags and environment beat the preset's values", async () => {
    const file = configFile({ ...PANELS, preset: "fast" })
    const byEnv = await run(load(file, {}, { PARALLEL_LLM_PRESET: "deep" }))
    expect(byEnv.settings.models).toEqual(["deep/x", "deep/y", "deep/z"])
    expect(byEnv.settings.graceMs).toBe(5_000)
    expect(byEnv.sources.preset).toBe("env")

    const byFlag = await run(load(file, { preset: "deep" }, { PARALLEL_LLM_PRESET: "fast" }))
    expect(Option.getOrNull(byFlag.settings.preset)).toBe("deep")
    expect(byFlag.settings.models).toEqual(["deep/x", "deep/y", "deep/z"])
    // deep sets no synthesizer: the file's own stays.
    expect(byFlag.settings.synthesizer).toBe("file/synth")

    const modelFlag = await run(load(file, { models: "flag/m" }, { PARALLEL_LLM_SYNTHESIZER: "env/s" }))
    expect(modelFlag.settings.models).toEqual(["flag/m"])
    expect(modelFlag.settings.synthesizer).toBe("env/s")
    expect(modelFlag.settings.deadlineMs).toEqual(Option.some(30_000))
  })

  it("refuses an unknown preset naming the ones that exist, and says when there are none", async () => {
    expect(await refusal(load(configFile(PANELS), { preset: "fats" }))).toBe(
      `--preset: unknown preset "fats": the presets are fast, deep`
    )
    expect(await refusal(load(configFile({ models: ["a/b"] }), {}, { PARALLEL_LLM_PRESET: "fast" }))).toMatch(
      /^PARALLEL_LLM_PRESET: unknown preset "fast": .*config-\d+\.json defines none$/
    )
    expect(await refusal(load(undefined, { preset: "fast" }))).toMatch(/no config file was read/)
    // A name every object has is still not a preset.
    expect(await refusal(load(configFile(PANELS), { preset: "constructor" }))).toMatch(/unknown preset "constructor"/)
  })

  it("refuses a key a preset may not hold, and a bad value, naming the preset and the field", async () => {
    const notPresettable = await refusal(load(configFile({ presets: { slow: { timeout: 30 } } })))
    expect(notPresettable).toMatch(/presets\.slow\.timeout: not a setting a preset may hold \(it may hold models, synthesizer, /)
    const badType = await refusal(load(configFile({ presets: { slow: { quorum: "two" } } })))
    expect(badType).toMatch(/presets\.slow\.quorum: Expected number, actual "two"/)
    // Bad only once decoded like a flag's value: refused when the file is read, even when the preset is not chosen.
    const outOfBounds = await refusal(load(configFile({ presets: { slow: { quorum: 0 } } })))
    expect(outOfBounds).toMatch(/^presets\.slow\.quorum \(in .*\): must be a whole number from 1 to 1000, got 0$/)
    const badName = await refusal(load(configFile({ presets: { "a b": { quorum: 2 } } })))
    expect(badName).toMatch(/"a b" is not a preset name/)
  })
})

describe("presets in the command line and the MCP server", () => {
  let fake: FakeOpenRouter
  let file: string
  const outputDir = path.join(tmp, "runs")
  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? "",
    HOME: tmp,
    XDG_CONFIG_HOME: emptyConfigHome,
    OPENROUTER_BASE_URL: fake.url,
    PARALLEL_LLM_OUTPUT_DIR: outputDir,
    ...extra
  })

  beforeAll(async () => {
    fake = await startFakeOpenRouter({
      models: ["file/one", "file/two", "file/synth", "fast/a", "fast/b", "fast/synth", "deep/x", "deep/y", "deep/z", "call/synth"]
        .map((id) => ({ id }))
    })
    file = configFile({ ...PANELS, presets: { ...PANELS.presets, odd: { models: ["fast/aa"] } } })
  })
  afterAll(async () => {
    await fake?.close()
  })

  it("config: --preset beats PARALLEL_LLM_PRESET, and the preset's values show their source", async () => {
    const result = await runCliInProcess(["config", "--json", "--config", file, "--preset", "deep"], {
      env: env({ PARALLEL_LLM_PRESET: "fast" })
    })
    expect(result.stderr).toBe("")
    const rows = JSON.parse(result.stdout) as ReadonlyArray<{ setting: string; value: unknown; source: string }>
    const row = (setting: string) => rows.find((r) => r.setting === setting)
    expect(row("preset")).toEqual({ setting: "preset", value: "deep", source: "flag --preset" })
    expect(row("models")).toEqual({ setting: "models", value: ["deep/x", "deep/y", "deep/z"], source: `preset deep (file ${file})` })
    expect(row("synthesizer")?.source).toBe(`file ${file}`)
  })

  it("models: lists each preset's models, checked, with a suggestion only for a close id", async () => {
    const result = await runCliInProcess(["models", "--config", file, "--preset", "fast"], { env: env() })
    expect(result.stdout).toMatch(/^preset fast \(active\)\s+fast\/a\s+found/m)
    expect(result.stdout).toMatch(/^preset deep\s+deep\/z\s+found/m)
    expect(result.stdout).toMatch(/^preset odd\s+fast\/aa\s+NOT FOUND \(did you mean fast\/a\?\)/m)
    // Some configured ids are found: no list of what the server has.
    expect(result.stderr).not.toContain("lists none of these")
    expect(result.code).toBe(1)
  })

  describe("MCP", () => {
    let mcp: InProcessConnection
    beforeAll(async () => {
      mcp = await connectMcpInProcess({
        ...serverEnv({ baseUrl: fake.url, outputDir, apiKey: "k", models: [], synthesizer: "file/synth" }),
        PARALLEL_LLM_MODELS: "",
        PARALLEL_LLM_SYNTHESIZER: "",
        PARALLEL_LLM_CONFIG: file
      })
    })
    afterAll(async () => {
      await mcp?.close()
    })
    const call = (name: string, args: Record<string, unknown>) =>
      mcp.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }) as Promise<CallToolResult>

    it("process_prompt with a preset asks the preset's models; an explicit argument beats the preset", async () => {
      fake.reset()
      const result = await call("process_prompt", { prompt: "2+2?", preset: "fast", synthesizer: "call/synth" })
      expect(result.isError).toBeFalsy()
      const asked = fake.chatRequests().map((r) => r.model).sort()
      expect(asked).toEqual(["call/synth", "fast/a", "fast/b"])
      // The server's own settings are untouched for the next call.
      fake.reset()
      await call("process_prompt", { prompt: "2+2?" })
      expect(fake.chatRequests().map((r) => r.model).sort()).toEqual(["file/one", "file/synth", "file/two"])
    })

    it("process_prompt with an unknown preset is refused naming the presets, and nothing is sent", async () => {
      fake.reset()
      const result = await call("process_prompt", { prompt: "2+2?", preset: "fats" })
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain(`unknown preset \\"fats\\": the presets are fast, deep, odd`)
      expect(fake.chatRequests()).toHaveLength(0)
    })

    it("list_models shows the presets with their models", async () => {
      const result = await call("list_models", {})
      const presets = (result.structuredContent as { presets?: unknown }).presets
      expect(presets).toEqual([
        { name: "fast", models: ["fast/a", "fast/b"] },
        { name: "deep", models: ["deep/x", "deep/y", "deep/z"] },
        { name: "odd", models: ["fast/aa"] }
      ])
      const block = result.content[0]
      expect(block?.type === "text" ? block.text : "").toContain("- preset deep: deep/x, deep/y, deep/z")
    })
  })
})
