import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { makeGate } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 13, items 4 and 9 with the command line and the MCP server in-process (the server as `serve` builds it from
// its environment): the bound on models in one run, from every source, before any call; and one bound on upstream
// calls in flight for the whole `serve` process.

const { root: tmp, freshDir } = tempRoot("pllm-limits-")
const provider = withFakeProvider({ default: { kind: "ok", content: "an answer" } })
const envFor = (dir: string, extra: Record<string, string> = {}) =>
  fakeCliEnv(provider.fake.url, { home: tmp, outputDir: path.join(dir, "runs") }, extra)
const many = (n: number) => Array.from({ length: n }, (_, i) => `many/m${i + 1}`)

describe("the bound on models in one run (maxModels, default 16)", () => {
  it("refuses more, from flags, the environment or the config file, with exit 2 and no call", async () => {
    const dir = freshDir("max-models")
    const configFile = path.join(dir, "config.json")
    fs.writeFileSync(configFile, JSON.stringify({ models: many(17) }))
    provider.fake.reset()
    const attempts = [
      await runCliInProcess(["ask", "hi", ...many(17).flatMap((m) => ["-m", m]), "-s", "many/synth"], { env: envFor(dir) }),
      await runCliInProcess(["ask", "hi", "-s", "many/synth"], { env: envFor(dir, { PARALLEL_LLM_MODELS: many(17).join(",") }) }),
      await runCliInProcess(["ask", "hi", "-s", "many/synth", "--config", configFile], { env: envFor(dir) }),
      await runCliInProcess(["ask", "hi", "-m", "a/one", "-m", "a/two", "-m", "a/three", "-s", "many/synth"], {
        env: envFor(dir, { PARALLEL_LLM_MAX_MODELS: "2" })
      })
    ]
    for (const [i, result] of attempts.entries()) {
      expect(result.code, `attempt ${i}: ${result.stderr}`).toBe(2)
      expect(result.stderr).toContain("--max-models")
    }
    expect(provider.fake.chatRequests()).toHaveLength(0)
  })

  it("allows more when raised", async () => {
    const result = await runCliInProcess(["ask", "hi", ...many(17).flatMap((m) => ["-m", m]), "-s", "many/synth", "--max-models", "17"], {
      env: envFor(freshDir("raised"))
    })
    expect(result.code, result.stderr).toBe(0)
  })

  it("applies to an MCP call", async () => {
    const mcp = await connectMcpInProcess({
      ...envFor(freshDir("mcp-models")),
      PARALLEL_LLM_MAX_MODELS: "2",
      PARALLEL_LLM_SYNTHESIZER: "many/synth"
    })
    try {
      provider.fake.reset()
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "hi", models: many(3) } })
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain("--max-models")
      expect(provider.fake.chatRequests()).toHaveLength(0)
    } finally {
      await mcp.close()
    }
  })
})

describe("the process-wide bound on upstream calls (maxInFlight)", () => {
  it("holds across concurrent MCP calls, each run keeping its own bound", async () => {
    const mcp = await connectMcpInProcess(
      {
        ...envFor(freshDir("in-flight")),
        PARALLEL_LLM_MAX_IN_FLIGHT: "3",
        PARALLEL_LLM_CONCURRENCY: "2",
        PARALLEL_LLM_MODELS: many(4).join(","),
        PARALLEL_LLM_SYNTHESIZER: "many/synth"
      },
      undefined,
      { ownHttpClient: true }
    )
    try {
      provider.fake.reset()
      // Every answer is held until the bound is full (and a moment longer), so that the four runs' calls overlap:
      // without the bound, the four runs would have 8 calls in flight by then. Then they all answer at once.
      const held = makeGate()
      provider.fake.setDefault({ kind: "ok", content: "an answer", until: held.until })
      const calls = Array.from(
        { length: 4 },
        (_, i) => mcp.client.callTool({ name: "process_prompt", arguments: { prompt: `question ${i}` } })
      )
      await provider.fake.waitForRequests(3)
      await new Promise((resolve) => setTimeout(resolve, 50))
      held.open()
      for (const result of await Promise.all(calls)) expect(result.isError ?? false).toBe(false)
      expect(provider.fake.chatRequests()).toHaveLength(4 * 5)
      expect(provider.fake.maxInFlight).toBeLessThanOrEqual(3)
      expect(provider.fake.connections).toBeLessThanOrEqual(3)
    } finally {
      await mcp.close()
    }
  })
})
