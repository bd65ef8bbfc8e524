import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SettingsError } from "../../src/domain/errors.js"
import { Settings } from "../../src/services/settings.js"
import { type DegradedSettings, loadDegraded, StartupProblems } from "../../src/settings/degraded.js"
import type { RawSettings } from "../../src/settings/values.js"
import { connectInProcess, connectMcpInProcess, serverServices } from "../support/inProcessMcp.js"
import { itLive } from "../support/itLive.js"
import { serverEnv } from "../support/mcpHarness.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { layerTestLogging } from "../support/testLogging.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// A server that cannot work still starts and says why: no key, a broken config file, an output directory
// it cannot make. tools/list answers; each call that needs the missing piece is an isError line naming
// the problem and its fix; the rest go on. Only a bad command-line flag still stops it.

const tempDir = makeTempDirs("pllm-degraded-")
const KEY = "sk-or-v1-DEGRADED-0123456789abcdef0123456789"

/** No config file of the user running the tests is read: an empty per-user config directory. */
const hermetic = () => ({ XDG_CONFIG_HOME: tempDir(), APPDATA: tempDir() })

const load = (env: Readonly<Record<string, string | undefined>>, flags: RawSettings = {}) =>
  loadDegraded({ flags, env: { ...hermetic(), ...env } }).pipe(Effect.provide(NodeFileSystem.layer))

const textOf = (result: CallToolResult, index = 0): string => {
  const block = result.content[index]
  return block?.type === "text" ? block.text : ""
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)

/** A server connection over these settings and problems, a provider double that records every request. */
const withServer = <A>(
  degraded: DegradedSettings,
  test: (client: Client, requests: () => Effect.Effect<number>) => Effect.Effect<A>
) =>
  Effect.gen(function*() {
    const provider = yield* makeScriptedClient({})
    const services = serverServices(Settings.Test(degraded.loaded.settings), provider.layer, layerTestLogging([])).pipe(
      Layer.merge(Layer.succeed(StartupProblems, degraded.problems))
    )
    const client = yield* connectInProcess.pipe(Effect.provide(services))
    return yield* test(client, () => Effect.map(provider.requests, (r) => r.length))
  }).pipe(Effect.scoped)

describe("serve without what it needs (in process, SDK client)", () => {
  itLive.effect(
    "no key: tools/list answers, process_prompt names OPENROUTER_API_KEY and sends nothing, list_runs works",
    () =>
      Effect.gen(function*() {
        const outputDir = tempDir()
        const degraded = yield* load({ PARALLEL_LLM_OUTPUT_DIR: outputDir })
        expect(degraded.problems.map((p) => p.blocks)).toEqual(["key"])
        yield* withServer(degraded, (client, requests) =>
          Effect.gen(function*() {
            const { tools } = yield* Effect.promise(() => client.listTools())
            expect(tools.length).toBe(8)
            for (
              const [name, args] of [["process_prompt", { prompt: "hi" }], ["continue_run", { runId: "x", prompt: "hi" }], [
                "resynthesize",
                {
                  runId: "x"
                }
              ]] as const
            ) {
              const refused = yield* call(client, name, args)
              expect(refused.isError, name).toBe(true)
              expect(refused.content).toHaveLength(1)
              expect(textOf(refused)).toMatch(new RegExp(`^${name} cannot run: OPENROUTER_API_KEY is not set\\.`))
              expect(textOf(refused)).toContain("restart the server")
              expect(textOf(refused)).not.toContain("\n")
            }
            expect(yield* requests()).toBe(0)
            const runs = yield* call(client, "list_runs")
            expect(runs.isError).toBeFalsy()
            expect(textOf(runs)).toContain(outputDir)
            expect((yield* call(client, "list_models")).isError).toBeFalsy()
            const config = yield* call(client, "get_config")
            expect(config.isError).toBe(true)
            expect(textOf(config)).toMatch(/^The server cannot work until this is fixed: OPENROUTER_API_KEY is not set/)
            // What it can still show: the settings it read.
            expect(textOf(config, 1)).toContain(outputDir)
          }))
      })
  )

  itLive.effect(
    "a broken config file: every tool but get_config names the file and the line; get_config says it",
    () =>
      Effect.gen(function*() {
        const dir = tempDir()
        const file = path.join(dir, "config.json")
        fs.writeFileSync(file, `{\n  "models": ["a/one", "a/two"],\n  "retries": "many"\n}\n`)
        const degraded = yield* load({ OPENROUTER_API_KEY: KEY, PARALLEL_LLM_CONFIG: file, PARALLEL_LLM_OUTPUT_DIR: dir })
        expect(degraded.problems.map((p) => p.blocks)).toEqual(["settings"])
        yield* withServer(degraded, (client, requests) =>
          Effect.gen(function*() {
            for (const name of ["process_prompt", "list_runs", "list_models", "get_run"]) {
              const refused = yield* call(
                client,
                name,
                name === "get_run" ? { runId: "x" } : name === "process_prompt" ? { prompt: "hi" } : {}
              )
              expect(refused.isError, name).toBe(true)
              expect(textOf(refused)).toBe(
                `${name} cannot run: ${file}, line 3: retries: Expected number, actual "many"; fix it, then restart the server.`
              )
            }
            expect(yield* requests()).toBe(0)
            const config = yield* call(client, "get_config")
            expect(config.isError).toBe(true)
            expect(textOf(config)).toContain(`${file}, line 3`)
          }))
      })
  )

  itLive.effect(
    "an output directory it cannot make: the tools that read or write runs name the setting; list_models works",
    () =>
      Effect.gen(function*() {
        const blocker = path.join(tempDir(), "a-file")
        fs.writeFileSync(blocker, "")
        const degraded = yield* load({ OPENROUTER_API_KEY: KEY, PARALLEL_LLM_OUTPUT_DIR: path.join(blocker, "runs") })
        expect(degraded.problems.map((p) => p.blocks)).toEqual(["outputDir"])
        yield* withServer(degraded, (client) =>
          Effect.gen(function*() {
            const runs = yield* call(client, "list_runs")
            expect(runs.isError).toBe(true)
            expect(textOf(runs)).toBe(
              `list_runs cannot run: the output directory ${path.join(blocker, "runs")} cannot be created ` +
                "(a part of the path is a file, not a directory): set PARALLEL_LLM_OUTPUT_DIR to a directory this server may write, " +
                "then restart the server."
            )
            expect((yield* call(client, "list_models")).isError).toBeFalsy()
          }))
      })
  )

  itLive.effect("a bad command-line flag still fails at once, naming the flag", () =>
    Effect.gen(function*() {
      const error = yield* load({}, { timeout: "soon" }).pipe(Effect.flip)
      expect(error).toBeInstanceOf(SettingsError)
      expect(error.message).toMatch(/^--timeout/)
    }))

  itLive.effect("a bad environment variable degrades like a bad file, naming the variable", () =>
    Effect.gen(function*() {
      const degraded = yield* load({ OPENROUTER_API_KEY: KEY, PARALLEL_LLM_RETRIES: "many" })
      expect(degraded.problems).toEqual([{
        blocks: "settings",
        message: expect.stringMatching(/^PARALLEL_LLM_RETRIES: .*restart the server\.$/)
      }])
    }))
})

describe("serve without what it needs (from the environment serve reads)", () => {
  const provider = withFakeProvider({ script: {} })

  it("a broken config file: tools/list answers, process_prompt names the file and line, nothing sent, stderr says it once", async () => {
    const dir = tempDir()
    const file = path.join(dir, "config.json")
    fs.writeFileSync(file, `{\n  "timeout": 30,\n  "models": ["a/one",],\n}\n`)
    const env = serverEnv({
      baseUrl: provider.url,
      outputDir: dir,
      apiKey: KEY,
      models: ["a/one"],
      synthesizer: "a/s",
      extra: { ...hermetic(), PARALLEL_LLM_CONFIG: file }
    })
    const mcp = await connectMcpInProcess(env)
    try {
      const { tools } = await mcp.client.listTools()
      expect(tools.map((t) => t.name)).toContain("process_prompt")
      const result = (await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "hi" } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(textOf(result)).toMatch(
        new RegExp(
          `^process_prompt cannot run: ${file.replace(/[.]/g, "\\.")}(: not valid JSON at line 3, column \\d+); .*restart the server\\.$`
        )
      )
      const config = (await mcp.client.callTool({ name: "get_config", arguments: {} })) as CallToolResult
      expect(config.isError).toBe(true)
      expect(textOf(config)).toContain(`${file}: not valid JSON at line 3`)
      expect(provider.log()).toHaveLength(0)
      expect(mcp.stderr().split(`${file}: not valid JSON at line 3`)).toHaveLength(2)
    } finally {
      await mcp.close()
    }
  })

  it("no key for OpenRouter: process_prompt answers isError naming OPENROUTER_API_KEY; stderr says it once", async () => {
    const dir = tempDir()
    const { OPENROUTER_API_KEY: _key, OPENROUTER_BASE_URL: _url, ...env } = serverEnv({
      baseUrl: provider.url,
      outputDir: dir,
      apiKey: KEY,
      models: ["a/one"],
      synthesizer: "a/s",
      extra: hermetic()
    })
    const mcp = await connectMcpInProcess(env)
    try {
      expect((await mcp.client.listTools()).tools).toHaveLength(8)
      const result = (await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "hi" } })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(textOf(result)).toMatch(/^process_prompt cannot run: OPENROUTER_API_KEY is not set\. .*Then restart the server\.$/)
      expect(mcp.stderr().split("OPENROUTER_API_KEY is not set")).toHaveLength(2)
    } finally {
      await mcp.close()
    }
  })
})
