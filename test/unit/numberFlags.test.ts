import { describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { makeTempDirs } from "../support/tempDirs.js"

// A number flag given a word that is no number: one line naming the flag and what it expected, the same for a
// command's own flags (`--limit`, `--runs`, `--port`) as for the settings' flags (`--retries`, `--temperature`).

const tempDir = makeTempDirs("pllm-number-flags-")

const refusal = async (args: ReadonlyArray<string>) => {
  const dir = tempDir()
  const result = await runCliInProcess(args, { env: { PATH: process.env["PATH"], HOME: dir, OPENROUTER_API_KEY: "sk-test" } })
  expect(result.code, result.stderr).toBe(2)
  return result.stderr.trim()
}

describe("a number flag given something else", () => {
  it("a command's own integer flags name the flag and the word", async () => {
    expect(await refusal(["runs", "--limit", "x"])).toBe(
      `parallel-llm: --limit: expected a whole number, got "x" (see parallel-llm runs --help)`
    )
    expect(await refusal(["eval", "items.jsonl", "--limit", "ten"])).toBe(
      `parallel-llm: --limit: expected a whole number, got "ten" (see parallel-llm eval --help)`
    )
    expect(await refusal(["batch", "prompts.jsonl", "--runs", "1.5"])).toBe(
      `parallel-llm: --runs: expected a whole number, got 1.5 (see parallel-llm batch --help)`
    )
    expect(await refusal(["serve", "--http", "--port", "http"])).toBe(
      `parallel-llm: --port: expected a whole number, got "http" (see parallel-llm serve --help)`
    )
  })

  it("the settings' number flags say it the same way", async () => {
    expect(await refusal(["ask", "hi", "--retries", "x"])).toBe(`parallel-llm: --retries: expected a whole number, got "x"`)
    expect(await refusal(["ask", "hi", "--temperature", "warm"])).toBe(`parallel-llm: --temperature: expected a number, got "warm"`)
  })
})
