import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { connectMcp } from "../support/mcpHarness.js"
import { cliEntry, withCodeCache } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"

// Issue 13 (items 2, 8 and 10) with the built CLI, where a process is the point: a server whose log file cannot be
// written, and a reader that closes the pipe early. The rest is test/unit/hostile.test.ts's.

const ESC = "\u001b"
// Bidi overrides and isolates (U+202E, U+2066) too: they make text read other than it is.
const hostile = `${ESC}]0;owned${String.fromCharCode(7)}${ESC}[2J\u009b31mforged\u202E\u2066\r`
let fake: FakeOpenRouter
const { root: tmp, freshDir } = tempRoot("pllm-hostile-")

beforeAll(async () => {
  if (!fs.existsSync(cliEntry)) throw new Error("run npm run build first")
  fake = await startFakeOpenRouter({
    script: {
      "h/good": { kind: "ok", content: `fine ${hostile} answer`, servedBy: `h/good${hostile}` },
      "h/synth": { kind: "ok", content: `the ${hostile} synthesis` },
      "h/long": { kind: "ok", content: "line of a long answer\n".repeat(10_000) }
    }
  })
})
afterAll(async () => {
  await fake?.close()
})

const envFor = (outputDir: string, extra: Record<string, string> = {}) =>
  fakeCliEnv(fake.url, { home: tmp, outputDir }, { PARALLEL_LLM_RETRIES: "0", ...extra })

describe("a log file that cannot be written", () => {
  it("serve warns once on stderr and answers tool calls", async () => {
    const mcp = await connectMcp({
      ...envFor(freshDir("devfull-serve"), { PARALLEL_LLM_LOG_FILE: "/dev/full" }),
      PARALLEL_LLM_MODELS: "h/good",
      PARALLEL_LLM_SYNTHESIZER: "h/synth"
    })
    try {
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "hello" } })
      expect(result.isError ?? false).toBe(false)
      expect(mcp.stderr().match(/cannot write the log file \/dev\/full/g)).toHaveLength(1)
    } finally {
      await mcp.close()
    }
  })
})

describe("a reader that closes the pipe early (ask … | head)", () => {
  it("ends quietly, without a stack trace", async () => {
    const outputDir = freshDir("epipe")
    const child = spawn(process.execPath, [cliEntry, "ask", "long", "--no-stream", "-m", "h/long", "-s", "h/long"], {
      env: withCodeCache(envFor(outputDir)),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    // Like `head -1`: read the first chunk, then close the pipe.
    child.stdout.once("data", () => child.stdout.destroy())
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)))
    expect(stderr, stderr).not.toContain("EPIPE")
    expect(stderr).not.toContain("internal error")
    expect(code, stderr).toBe(0)
    const [runId] = fs.readdirSync(outputDir)
    expect(JSON.parse(fs.readFileSync(path.join(outputDir, runId!, "run.json"), "utf8")).status).toBe("ok")
  })
})
