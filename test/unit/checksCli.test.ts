import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 22 items 4 and 6, issue 23 findings 11 and 14, with the CLI (in-process): what a user sees, the exit code,
// and that nothing reached the provider when the values could never work.

const KEY = "sk-or-v1-CLI-CHECKS-SECRET-0123456789abcdef"
const usage = (cost: number) => ({ prompt_tokens: 10, completion_tokens: 5, cost })
const provider = withFakeProvider({
  script: {
    "c/one": { kind: "ok", content: "one", usage: usage(0.0001) },
    "c/two": { kind: "ok", content: "two", usage: usage(0.0002) },
    "c/synth": { kind: "ok", content: "merged", usage: usage(0) }
  },
  models: [
    { id: "c/one", context_length: 1000, pricing: { prompt: "0.000001", completion: "0.000002" } },
    { id: "openrouter/auto", context_length: 2_000_000, pricing: { prompt: "-1", completion: "-1" } }
  ]
})
const { root: tmp, freshDir } = tempRoot("pllm-checks-cli-")
const envFor = (extra: Record<string, string> = {}) =>
  fakeCliEnv(provider.url, { home: tmp, outputDir: freshDir("runs") }, { XDG_CONFIG_HOME: tmp, OPENROUTER_API_KEY: KEY, ...extra })

const ask = ["ask", "hello", "-m", "c/one", "-m", "c/two", "-s", "c/synth"]

describe("refused before any request leaves", () => {
  it("a key with a character no HTTP header carries: exit 2, its position named, the key never printed", async () => {
    provider.fake.reset()
    const placeholder = await runCliInProcess(ask, { env: envFor({ OPENROUTER_API_KEY: "sk-or-v1-…" }) })
    expect(placeholder.code).toBe(2)
    expect(placeholder.stderr.trim()).toBe(
      "parallel-llm: OPENROUTER_API_KEY has a character that cannot go in an HTTP header at position 10 (U+2026); it is not " +
        "a key as issued (`sk-or-v1-…` in examples is a placeholder): copy it again from https://openrouter.ai/keys"
    )
    const pasted = await runCliInProcess(ask, { env: envFor({ OPENROUTER_API_KEY: `${KEY.slice(0, 30)}\u0008${KEY.slice(30)}` }) })
    expect(pasted.code).toBe(2)
    expect(pasted.stderr).toContain("at position 31 (U+0008)")
    expect(pasted.stderr + pasted.stdout).not.toContain(KEY.slice(10, 30))
    expect(provider.fake.requests).toHaveLength(0)
  })

  it("--quorum above the number of models: exit 2, both values named", async () => {
    provider.fake.reset()
    const result = await runCliInProcess([...ask, "--quorum", "99"], { env: envFor() })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("quorum 99 is more than the 2 candidate models of this run")
    expect(provider.fake.requests).toHaveLength(0)
  })

  it("a model id that is the key: exit 2, neither printed nor stored", async () => {
    provider.fake.reset()
    const outputDir = freshDir("key-as-model")
    const env = envFor({ PARALLEL_LLM_SYNTHESIZER: KEY, PARALLEL_LLM_OUTPUT_DIR: outputDir })
    const result = await runCliInProcess(["ask", "hello", "-m", "c/one", "-m", "c/two"], { env })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("PARALLEL_LLM_SYNTHESIZER: the model id is the API key (OPENROUTER_API_KEY)")
    expect(result.stderr + result.stdout).not.toContain(KEY)
    expect(fs.readdirSync(outputDir)).toEqual([])
    const config = await runCliInProcess(["config"], { env: envFor({ PARALLEL_LLM_SYNTHESIZER: KEY }) })
    expect(config.code).toBe(2)
    expect(config.stderr + config.stdout).not.toContain(KEY)
    expect(provider.fake.requests).toHaveLength(0)
  })
})

describe("messages a person reads", () => {
  it("runs --limit 0 and -1 are refused in one line", async () => {
    for (const limit of ["0", "-1"]) {
      const result = await runCliInProcess(["runs", "--limit", limit], { env: envFor() })
      expect(result.code, limit).toBe(2)
      expect(result.stderr.trim()).toBe(
        `parallel-llm: --limit: must be a whole number from 1 to 10000, got ${limit} (see parallel-llm runs --help)`
      )
    }
  })

  it("--output-dir /dev/null: what and where in plain words", async () => {
    const result = await runCliInProcess([...ask, "--output-dir", "/dev/null"], { env: envFor() })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("cannot create the output directory /dev/null (--output-dir): a file is in the way")
    expect(result.stderr).not.toMatch(/EEXIST|AlreadyExists|FileSystem\./)
  })

  it("a config file that is not JSON is named with a line and column, never quoted", async () => {
    const file = path.join(freshDir("shadow"), "shadow")
    fs.writeFileSync(file, "root:$6$SALTSALT$HASHHASHHASH:19000:0:99999:7:::\n")
    const result = await runCliInProcess(["config", "--config", file], { env: envFor() })
    expect(result.code).toBe(2)
    expect(result.stderr.trim()).toBe(`parallel-llm: ${file}: not valid JSON at line 1, column 1`)
    const nested = path.join(freshDir("broken"), "config.json")
    fs.writeFileSync(nested, `{\n  "models": ["c/one"],\n  "synthesizer": SECRETVALUE\n}\n`)
    const second = await runCliInProcess(["config", "--config", nested], { env: envFor() })
    expect(second.stderr.trim()).toBe(`parallel-llm: ${nested}: not valid JSON at line 3, column 18`)
  })

  it("config never shows the key, even pasted into another setting", async () => {
    const result = await runCliInProcess(["config", "--json"], { env: envFor({ PARALLEL_LLM_APP_TITLE: `team ${KEY}` }) })
    expect(result.code).toBe(0)
    expect(result.stdout).not.toContain(KEY.slice(0, 16))
    expect(result.stdout).toContain("team <redacted>")
  })

  it("models shows a variable price as variable, and --max-cost refuses to bound a run with it", async () => {
    provider.fake.reset()
    const models = await runCliInProcess(["models", "-m", "c/one", "-m", "openrouter/auto", "-s", "c/one"], { env: envFor() })
    const row = models.stdout.split("\n").find((line) => line.includes("openrouter/auto"))
    expect(row).toMatch(/variable\s+variable$/)
    expect(models.stdout).not.toContain("-1000000")
    const budget = await runCliInProcess(
      ["ask", "hello", "-m", "c/one", "-m", "openrouter/auto", "-s", "c/one", "--max-cost", "0.000001", "--max-tokens", "10"],
      { env: envFor() }
    )
    expect(budget.code).toBe(2)
    expect(budget.stderr).toContain("--max-cost: no price known for openrouter/auto, so the cost cannot be bounded")
    expect(provider.log()).toHaveLength(0)
  })

  it("run.json keeps a cost without float noise", async () => {
    const outputDir = freshDir("cost")
    const result = await runCliInProcess(ask, { env: envFor({ PARALLEL_LLM_OUTPUT_DIR: outputDir }) })
    expect(result.code, result.stderr).toBe(0)
    const [runId] = fs.readdirSync(outputDir)
    const text = fs.readFileSync(path.join(outputDir, runId!, "run.json"), "utf8")
    expect(JSON.parse(text).usage.cost).toBe(0.0003)
    expect(text).not.toContain("0.00030000000000000003")
  })
})
