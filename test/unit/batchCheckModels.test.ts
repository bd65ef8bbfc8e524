import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// `batch --check-models` checks every model once for the whole batch: a CLI agent's id is checked against the CLIs on
// PATH, as a single run's check does (checkRunRequest.ts), never looked for in the HTTP provider's catalogue.

const provider = withFakeProvider({ default: { kind: "ok", content: "4" } })
const tempDir = makeTempDirs("pllm-batch-check-")
const PATH = process.env["PATH"]
afterEach(() => {
  process.env["PATH"] = PATH
})

describe("batch --check-models", () => {
  it("says a CLI agent's CLI is not on PATH, not that the provider does not list its id, and pays nothing", async () => {
    const dir = tempDir()
    const input = path.join(dir, "prompts.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ prompt: "What is 2+2?", models: ["claude-code/sonnet", "test/one"] })}\n`)
    // The discovery reads this process's PATH: one without any vendor CLI.
    process.env["PATH"] = path.join(dir, "empty")
    const r = await runCliInProcess(["batch", input, "--out", path.join(dir, "out.jsonl"), "--check-models", "-s", "test/synth"], {
      env: provider.cliEnv(dir)
    })
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain("CLI agent not ready: claude-code/sonnet: claude is not on PATH")
    expect(r.stderr).not.toContain("unknown model")
    expect(provider.log()).toHaveLength(0)
  })
})
