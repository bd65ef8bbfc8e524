import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectMcp } from "../support/mcpHarness.js"
import { runCli, startCli } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { agentEnv, type AgentFakes, modelCalls, seedUserConfigs, startAgentFakes, toolNames, toolsBin } from "./agentHarness.js"

// The agents tier (npm run test:agents): Claude Code, Codex and Gemini CLI, the real ones, as candidates and
// synthesizers of the built `parallel-llm`, each against a loopback fake of its vendor's API, beside an HTTP model.

const tempDir = makeTempDirs("parallel-llm-agents-")
const PANEL = ["-m", "claude-code/sonnet", "-m", "codex/gpt-5", "-m", "gemini-cli/gemini-2.5-pro", "-m", "openai/gpt-4o-mini"]
/** Tools that write files or run commands, by each vendor's name for them. */
const WRITE_OR_RUN = /bash|shell|exec|write|edit|replace|patch|notebook|command|stdin/i

let fakes: AgentFakes
let home: string
let codexHome: string
let spyMarker: string
const env = (outputDir: string, extra: Record<string, string> = {}) => ({ ...agentEnv(fakes, { home, codexHome, outputDir }), ...extra })

interface Manifest {
  readonly status: string
  readonly candidates: ReadonlyArray<
    { model: string; status: string; usage?: { source?: string }; error?: { tag: string; message: string } }
  >
  readonly synthesis?: { model: string; status: string; usage?: { source?: string } }
}
const manifestIn = (outputDir: string): Manifest => {
  const [run] = fs.readdirSync(outputDir)
  return JSON.parse(fs.readFileSync(path.join(outputDir, run ?? "", "run.json"), "utf8")) as Manifest
}

beforeAll(async () => {
  fakes = await startAgentFakes()
  home = tempDir()
  codexHome = path.join(home, ".codex")
  spyMarker = seedUserConfigs(home, codexHome)
})
afterAll(() => fakes.close())

describe("CLI agents answer, the real CLIs against their vendors' fakes", () => {
  it(
    "each CLI as a candidate and as the synthesizer, in a mixed panel with an HTTP model; no tool that writes or runs, no MCP server",
    async () => {
      const synthesizers = ["claude-code/sonnet", "codex/gpt-5", "gemini-cli/gemini-2.5-pro"]
      const outputs = synthesizers.map(() => tempDir())
      const results = await Promise.all(synthesizers.map((synthesizer, i) =>
        runCli(
          ["ask", "What is 2+2?", ...(i === 0 ? PANEL : ["-m", "openai/gpt-4o-mini"]), "-s", synthesizer],
          { env: env(outputs[i] ?? "") }
        )
      ))
      for (const [i, result] of results.entries()) {
        expect(result.code, result.stderr).toBe(0)
        expect(result.stdout).toContain("Answer from the fake.")
        const manifest = manifestIn(outputs[i] ?? "")
        expect(manifest.status).toBe("ok")
        expect(manifest.synthesis).toMatchObject({ model: synthesizers[i], status: "ok", usage: { source: "subscription" } })
      }
      const panel = manifestIn(outputs[0] ?? "")
      expect(panel.candidates.map((c) => [c.model, c.status, c.usage?.source])).toEqual([
        ["claude-code/sonnet", "ok", "subscription"],
        ["codex/gpt-5", "ok", "subscription"],
        ["gemini-cli/gemini-2.5-pro", "ok", "subscription"],
        ["openai/gpt-4o-mini", "ok", undefined]
      ])
      // Each vendor's fake was asked, with the prompt.
      for (const fake of [fakes.anthropic, fakes.openai, fakes.gemini]) {
        expect(modelCalls(fake).some((c) => JSON.stringify(c.body).includes("What is 2+2?"))).toBe(true)
      }
      // No tool that writes files or runs commands reached a vendor, and no MCP server was loaded, whatever the user's
      // config says.
      const offered = [fakes.anthropic, fakes.openai, fakes.gemini].flatMap((fake) => modelCalls(fake).flatMap(toolNames))
      expect(modelCalls(fakes.anthropic).length).toBeGreaterThan(0)
      expect(offered.filter((name) => WRITE_OR_RUN.test(name))).toEqual([])
      expect(offered.filter((name) => /mcp|spy/i.test(name))).toEqual([])
      // Claude and Gemini are offered nothing at all; Codex only what cannot write or run (docs/cli-agents.md).
      expect(modelCalls(fakes.anthropic).flatMap(toolNames)).toEqual([])
      expect(modelCalls(fakes.gemini).flatMap(toolNames)).toEqual([])
      expect(new Set(modelCalls(fakes.openai).flatMap(toolNames))).toEqual(new Set(["request_user_input", "view_image"]))
      expect(fs.existsSync(spyMarker)).toBe(false)
    },
    300_000
  )

  it("the same panel over MCP: process_prompt with CLI agents and an HTTP model", async () => {
    const outputDir = tempDir()
    const mcp = await connectMcp(env(outputDir) as Record<string, string>)
    try {
      const result = await mcp.client.callTool(
        {
          name: "process_prompt",
          arguments: {
            prompt: "What is 2+2?",
            models: ["claude-code/sonnet", "codex/gpt-5", "gemini-cli/gemini-2.5-pro", "openai/gpt-4o-mini"],
            synthesizer: "claude-code/sonnet",
            wait: 240
          }
        },
        undefined,
        { timeout: 280_000 }
      )
      expect(result.isError, mcp.stderr()).toBeFalsy()
      expect(result.structuredContent).toMatchObject({ status: "ok", final: "Answer from the fake." })
      // list_models shows the CLIs the server finds, with their versions.
      const listed = await mcp.client.callTool({ name: "list_models", arguments: {} }, undefined, { timeout: 120_000 })
      expect((listed.structuredContent as { agents?: ReadonlyArray<{ cli: string; found: boolean; version?: string }> }).agents).toEqual([
        expect.objectContaining({ cli: "claude-code", found: true, version: "2.1.332" }),
        expect.objectContaining({ cli: "codex", found: true, version: "0.169.0" }),
        expect.objectContaining({ cli: "gemini-cli", found: true, version: "0.61.0", loggedIn: true })
      ])
    } finally {
      await mcp.close()
    }
  }, 300_000)
})

describe("CLI agents found", () => {
  it("models lists the CLIs on PATH with their versions; --check-models refuses a CLI that is not there, in one line", async () => {
    const outputDir = tempDir()
    const listed = await runCli(["models", ...PANEL, "-s", "openai/gpt-4o-mini", "--fallback-synthesizer", "none"], { env: env(outputDir) })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/claude-code +claude 2\.1\.332, logged in/)
    expect(listed.stdout).toMatch(/codex +codex 0\.169\.0, login unknown/)
    expect(listed.stdout).toMatch(/gemini-cli +gemini 0\.61\.0, logged in/)
    expect(listed.stdout).toMatch(/candidate +claude-code\/sonnet +found/)

    const bin = tempDir()
    fs.symlinkSync(path.join(toolsBin, "claude"), path.join(bin, "claude"))
    const refused = await runCli(
      ["ask", "What is 2+2?", "--check-models", "-m", "claude-code/sonnet", "-m", "gemini-cli/gemini-2.5-pro", "-s", "openai/gpt-4o-mini"],
      { env: env(outputDir, { PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}` }) }
    )
    expect(refused.code).toBe(2)
    expect(refused.stderr.trim().split("\n")).toEqual([
      "parallel-llm: CLI agent not ready: gemini-cli/gemini-2.5-pro: gemini is not on PATH"
    ])
  }, 300_000)
})

describe("CLI agents fail alone", () => {
  it("cancel mid-stream kills the CLI (its connection closes at the fake within a second) and keeps the streamed text", async () => {
    const outputDir = tempDir()
    fakes.anthropic.setReply({ kind: "hang", text: "Half of an answer" })
    const before = fakes.anthropic.calls.length
    try {
      const cli = startCli(["ask", "What is 2+2?", "-m", "claude-code/sonnet", "-m", "openai/gpt-4o-mini", "-s", "openai/gpt-4o-mini"], {
        env: env(outputDir)
      })
      const call = await fakes.anthropic.waitFor((c) => fakes.anthropic.calls.indexOf(c) >= before, 120_000)
      // The text is on its way: wait until the run holds it (progress shows it in stderr only at the end), then cancel.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const cancelledAt = Date.now()
      cli.child.kill("SIGINT")
      const result = await cli.done
      expect(result.code).toBe(130)
      await fakes.anthropic.waitFor((c) => c === call && c.endedAt !== undefined, 5_000)
      expect(call.aborted).toBe(true)
      expect((call.endedAt ?? Infinity) - cancelledAt).toBeLessThan(1000)
      const [run] = fs.readdirSync(outputDir)
      const partial = path.join(outputDir, run ?? "", "responses", "01-claude-code-sonnet.partial.md")
      expect(fs.readFileSync(partial, "utf8")).toBe("Half of an answer")
    } finally {
      fakes.anthropic.setReply({ kind: "text", text: "Answer from the fake." })
    }
  }, 300_000)

  it("a CLI not on PATH and one not logged in each fail in one line; the other candidates still answer", async () => {
    const outputDir = tempDir()
    // A PATH with claude and gemini but no codex; claude without a key or a login.
    const bin = tempDir()
    for (const name of ["claude", "gemini"]) fs.symlinkSync(path.join(toolsBin, name), path.join(bin, name))
    const { ANTHROPIC_API_KEY: _key, ...withoutKey } = env(outputDir, { PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}` })
    const result = await runCli(
      ["ask", "What is 2+2?", "-m", "claude-code/sonnet", "-m", "codex/gpt-5", "-m", "openai/gpt-4o-mini", "-s", "openai/gpt-4o-mini"],
      { env: { ...withoutKey, HOME: tempDir() } }
    )
    expect(result.code, result.stderr).toBe(0)
    const manifest = manifestIn(outputDir)
    expect(manifest.status).toBe("partial")
    const [claude, codex, http] = manifest.candidates
    expect(claude?.error?.tag).toBe("AgentUnavailable")
    expect(claude?.error?.message).toContain("run `claude login`")
    expect(codex?.error).toMatchObject({ tag: "AgentUnavailable" })
    expect(codex?.error?.message).toContain("codex is not on PATH")
    expect(http?.status).toBe("ok")
    expect(result.stdout).toContain("Answer from")
  }, 300_000)
})
