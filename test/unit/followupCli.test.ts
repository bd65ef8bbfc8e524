import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { makeGate, type Script } from "../support/fakeOpenRouter.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { readManifest, serverEnv } from "../support/mcpHarness.js"
import { freshDirs, repoRoot } from "../support/spawnCli.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Follow-up questions through the command line (`ask --continue`, `runs show`) and the MCP server (`continue_run`),
// both in-process.

/** Holds the slow synthesizer's answer until the test has seen its run `running`. */
const slowSynth = makeGate()
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-followup-cli-"))
const freshDir = freshDirs(tmp)
const API_KEY = "sk-or-v1-FOLLOWUP-00112233445566778899aabbccddeeff"

const script = {
  // A provider's text that tries to drive the terminal: `runs show` must not pass it on.
  "c/synth": [{ kind: "ok", content: "Four.\u001b]0;pwned\u0007" }, { kind: "ok", content: "Twelve." }],
  "m/synth": [{ kind: "ok", content: "M-FINAL-1" }, { kind: "ok", content: "M-FINAL-2" }],
  "m/slow-synth": { kind: "ok", content: "M-SLOW-FINAL", until: slowSynth.until }
} satisfies Script
const provider = withFakeProvider({ script })
// The fake counts a model's calls across the file; each test's first synthesis must get the first answer, whatever ran
// before it: setting the script again starts every count over. The gate is closed again for the same reason.
beforeEach(() => {
  provider.fake.setScript(script)
  slowSynth.close()
})
afterAll(async () => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

interface SentMessage {
  readonly role: string
  readonly content: string
}
const messagesOf = (since: number, model: string) =>
  provider.fake.chatRequests().slice(since).filter((r) => r.model === model).map((r) =>
    (r.body as { messages: Array<SentMessage> }).messages
  )

describe("ask --continue, through the command line", () => {
  const outputDir = freshDir("cli")
  const env = () => ({
    PATH: process.env.PATH,
    HOME: tmp,
    OPENROUTER_API_KEY: API_KEY,
    OPENROUTER_BASE_URL: provider.fake.url,
    PARALLEL_LLM_OUTPUT_DIR: outputDir,
    PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
  })
  const panel = ["-m", "c/one", "-m", "c/two", "-s", "c/synth"]

  it("asks a follow-up with the conversation, names the parent, and runs show prints the thread", async () => {
    const first = await runCliInProcess(["ask", "What is 2+2?", "--json", ...panel], { env: env() })
    expect(first.code, first.stderr).toBe(0)
    const firstId = (JSON.parse(first.stdout) as { id: string }).id
    const since = provider.fake.chatRequests().length

    const notes = path.join(tmp, "notes.md")
    fs.writeFileSync(notes, "three\n")
    const second = await runCliInProcess(["ask", "--continue", firstId, "And times 3?", "--attach", notes, "--json", ...panel], {
      env: env()
    })
    expect(second.code, second.stderr).toBe(0)
    const manifest = JSON.parse(second.stdout) as { id: string; parent: string; final: string }
    expect(manifest).toMatchObject({ parent: firstId, final: "Twelve." })
    expect(messagesOf(since, "c/one")).toEqual([[
      { role: "user", content: "What is 2+2?" },
      { role: "assistant", content: "Four.\u001b]0;pwned\u0007" },
      { role: "user", content: `File: ${notes}\n\`\`\`md\nthree\n\`\`\`\n\nAnd times 3?` }
    ]])

    const shown = await runCliInProcess(["runs", "show", manifest.id], { env: env() })
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`follow-up of run ${firstId}`)
    const thread = shown.stdout.slice(shown.stdout.indexOf(`── turn 1 · run ${firstId}`))
    expect(thread).toBe(
      [
        `── turn 1 · run ${firstId}`,
        "",
        "> What is 2+2?",
        "",
        "Four.]0;pwned",
        "",
        `── turn 2 · run ${manifest.id} (this run)`,
        "",
        `(attached: ${notes})`,
        "> And times 3?",
        "",
        "Twelve.",
        ""
      ].join("\n")
    )
  })

  it("refuses a run id that is not one, and a run that does not exist, with exit 2", async () => {
    const bad = await runCliInProcess(["ask", "--continue", "../x", "more?", ...panel], { env: env() })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`parallel-llm: cannot continue run ../x: "../x" is not a run id`)
    const missing = await runCliInProcess(["ask", "--continue", "20200101-000000-000-00000000", "more?", ...panel], { env: env() })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("cannot continue run 20200101-000000-000-00000000: no run 20200101-000000-000-00000000")
  })
})

describe("continue_run over MCP", () => {
  interface RunOutput {
    readonly runId: string
    readonly status: string
    readonly final: string | null
    readonly parent?: string
  }
  const outputOf = (result: unknown) => (result as CallToolResult).structuredContent as unknown as RunOutput
  /** A server in this process over the fake, m/one and m/two answering and m/synth synthesizing, with `extra` set. */
  const serverFor = (outputDir: string, extra: Record<string, string>) =>
    connectMcpInProcess(
      serverEnv({ baseUrl: provider.fake.url, outputDir, apiKey: API_KEY, models: ["m/one", "m/two"], synthesizer: "m/synth", extra })
    )

  it("returns like process_prompt, also running then get_run, and refuses a bad run id", async () => {
    const outputDir = freshDir("mcp")
    // A client without roots may read only --allow-dir directories: the repository, for the attached file.
    const mcp = await serverFor(outputDir, { PARALLEL_LLM_ALLOW_DIRS: repoRoot })
    try {
      // Listing the tools makes the client check every structured result against its output schema.
      const listed = await mcp.client.listTools()
      expect(listed.tools.map((t) => t.name)).toContain("continue_run")
      const first = outputOf(await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "Name a prime." } }))
      expect(first).toMatchObject({ status: "ok", final: "M-FINAL-1" })

      const since = provider.fake.chatRequests().length
      // Relative to the first --allow-dir (the client has no roots).
      const second = await mcp.client.callTool({
        name: "continue_run",
        arguments: { runId: first.runId, prompt: "A bigger one?", files: ["tsconfig.json"] }
      })
      expect(second.isError, JSON.stringify(second.content)).toBeFalsy()
      expect(outputOf(second)).toMatchObject({ status: "ok", final: "M-FINAL-2", parent: first.runId })
      expect(messagesOf(since, "m/two")).toEqual([[
        { role: "user", content: "Name a prime." },
        { role: "assistant", content: "M-FINAL-1" },
        {
          role: "user",
          content: `File: tsconfig.json\n\`\`\`json\n${
            fs.readFileSync(path.join(repoRoot, "tsconfig.json"), "utf8")
          }\`\`\`\n\nA bigger one?`
        }
      ]])
      const secondId = outputOf(second).runId
      expect(readManifest(path.join(outputDir, secondId))).toMatchObject({ parent: first.runId })

      // wait: 0 answers at once with the run going; get_run waits for it.
      const third = outputOf(
        await mcp.client.callTool({
          name: "continue_run",
          arguments: { runId: secondId, prompt: "And one more?", synthesizer: "m/slow-synth", wait: 0 }
        })
      )
      expect(third.status).toBe("running")
      slowSynth.open()
      const done = outputOf(await mcp.client.callTool({ name: "get_run", arguments: { runId: third.runId, wait: 30 } }))
      expect(done).toMatchObject({ runId: third.runId, status: "ok", final: "M-SLOW-FINAL" })
      expect(readManifest(path.join(outputDir, third.runId))).toMatchObject({ parent: secondId })

      const refused = (await mcp.client.callTool({ name: "continue_run", arguments: { runId: "../x", prompt: "more?" } })) as CallToolResult
      expect(refused.isError).toBe(true)
      expect(refused.content).toEqual([{ type: "text", text: `cannot continue run ../x: "../x" is not a run id` }])
      // The per-call preset goes through as process_prompt's does: an unknown one is refused by name.
      const unknownPreset = (await mcp.client.callTool({
        name: "continue_run",
        arguments: { runId: secondId, prompt: "more?", preset: "nope" }
      })) as CallToolResult
      expect(unknownPreset.isError).toBe(true)
      expect(JSON.stringify(unknownPreset.content)).toContain("nope")
    } finally {
      await mcp.close()
    }
  })

  it("applies every per-call setting it advertises: samples for a server whose strategy is self", async () => {
    const outputDir = freshDir("mcp-self")
    const mcp = await serverFor(outputDir, { PARALLEL_LLM_STRATEGY: "self" })
    try {
      const first = outputOf(await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "Name a prime.", samples: 2 } }))
      expect(first.status).toBe("ok")
      const since = provider.fake.chatRequests().length
      const second = outputOf(
        await mcp.client.callTool({ name: "continue_run", arguments: { runId: first.runId, prompt: "A bigger one?", samples: 3 } })
      )
      expect(second).toMatchObject({ status: "ok", parent: first.runId })
      expect(messagesOf(since, "m/one")).toHaveLength(3)
      expect(messagesOf(since, "m/two")).toHaveLength(0)
    } finally {
      await mcp.close()
    }
  })
})
