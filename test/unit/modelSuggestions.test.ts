import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { nearestIds } from "../../src/programs/listConfiguredModels.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// "Did you mean": only an id that is actually close, in `models` and in `--check-models`; and, on a server
// that has none of the configured ids (a local one with the default panel), what it does have.

describe("nearestIds", () => {
  const known = ["openai/gpt-5", "openai/gpt-5-mini", "anthropic/claude-sonnet-4.5", "qwen/qwen3-coder", "llama3.2:3b"]

  it("suggests an id a few edits away, or the same name under another vendor or tag", () => {
    expect(nearestIds("anthropic/claude-sonet-4.5", known)).toEqual(["anthropic/claude-sonnet-4.5"])
    expect(nearestIds("openai/gpt5", known)[0]).toBe("openai/gpt-5")
    expect(nearestIds("qwen3-coder", known)).toEqual(["qwen/qwen3-coder"])
    expect(nearestIds("meta/llama3.2:3b", known)).toEqual(["llama3.2:3b"])
    expect(nearestIds("llama3.2", known)).toEqual(["llama3.2:3b"])
  })

  it("suggests nothing when no known id is close", () => {
    expect(nearestIds("x-ai/grok-4", known)).toEqual([])
    expect(nearestIds("google/gemini-2.5-pro", ["llama3.2:3b", "qwen2.5:7b"])).toEqual([])
    expect(nearestIds("a/b", known)).toEqual([])
  })
})

describe("suggestions from the built CLI against a server of local model ids", () => {
  const provider = withFakeProvider({ models: [{ id: "llama3.2:3b" }, { id: "qwen2.5:7b" }] })
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-suggest-"))
  const env = () => ({
    PATH: process.env.PATH ?? "",
    HOME: tmp,
    XDG_CONFIG_HOME: path.join(tmp, "config"),
    OPENROUTER_BASE_URL: provider.url,
    PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, "runs")
  })

  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  it("models: the default panel is not there, nothing is suggested, and the server's own ids are named", async () => {
    const result = await runCliInProcess(["models"], { env: env() })
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/^candidate\s+~?openai\/\S+\s+NOT FOUND\s/m)
    expect(result.stdout).not.toContain("did you mean")
    expect(result.stderr).toContain("lists none of these; it has llama3.2:3b, qwen2.5:7b (choose with --model and --synthesizer)")
  })

  it("ask --check-models: refused before any call, with the close id suggested", async () => {
    provider.fake.reset()
    const result = await runCliInProcess(["ask", "--check-models", "-m", "llama3.2", "-m", "qwen2.5:7b", "-s", "qwen2.5:7b", "hi"], {
      env: env()
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`unknown model at ${provider.url}: llama3.2 (did you mean llama3.2:3b?)`)
    expect(provider.log()).toHaveLength(0)
  })
})
