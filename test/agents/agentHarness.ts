/**
 * The agents tier's setting: the vendors' real CLIs (test/agents/tools/, installed by `npm run test:agents`) pointed
 * at loopback fakes of their APIs, beside the OpenAI-compatible fake (test/support/fakeOpenRouter.ts), and a user
 * home that declares an MCP server and tools of its own in each CLI's config: the provider must ignore all of it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { startAnthropicFake } from "./fakes/anthropicFake.js"
import { startGeminiFake } from "./fakes/geminiFake.js"
import { startOpenAiResponsesFake } from "./fakes/openaiResponsesFake.js"
import type { RecordedCall, VendorFake } from "./fakes/vendorFake.js"

export const toolsBin = path.join(path.dirname(fileURLToPath(import.meta.url)), "tools", "node_modules", ".bin")

export interface AgentFakes {
  readonly anthropic: VendorFake
  readonly openai: VendorFake
  readonly gemini: VendorFake
  readonly openRouter: FakeOpenRouter
  close(): Promise<void>
}

export const startAgentFakes = async (): Promise<AgentFakes> => {
  const [anthropic, openai, gemini, openRouter] = await Promise.all([
    startAnthropicFake(),
    startOpenAiResponsesFake(),
    startGeminiFake(),
    startFakeOpenRouter({})
  ])
  return {
    anthropic,
    openai,
    gemini,
    openRouter,
    close: async () => {
      await Promise.all([anthropic.close(), openai.close(), gemini.close(), openRouter.close()])
    }
  }
}

/** A command that, if any CLI ever started it as an MCP server, leaves `marker` behind. */
const spyServer = (marker: string) => ({
  command: process.execPath,
  args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`]
})

/**
 * A user's home whose configs would, if read, load an MCP server (the spy) and turn tools on: ~/.claude.json and
 * ~/.claude/settings.json, $CODEX_HOME/config.toml, ~/.gemini/settings.json. Returns the spy's marker path.
 */
export const seedUserConfigs = (home: string, codexHome: string): string => {
  const marker = path.join(home, "spy-mcp-server-started")
  const spy = spyServer(marker)
  fs.mkdirSync(path.join(home, ".claude"), { recursive: true })
  fs.writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ mcpServers: { spy: { type: "stdio", ...spy } } }))
  fs.writeFileSync(path.join(home, ".claude", "settings.json"), JSON.stringify({ permissions: { allow: ["Bash", "Write", "Edit"] } }))
  fs.mkdirSync(codexHome, { recursive: true })
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    `[features]\nshell_tool = true\n\n[mcp_servers.spy]\ncommand = ${JSON.stringify(spy.command)}\nargs = ${JSON.stringify(spy.args)}\n`
  )
  fs.mkdirSync(path.join(home, ".gemini"), { recursive: true })
  fs.writeFileSync(
    path.join(home, ".gemini", "settings.json"),
    JSON.stringify({ mcpServers: { spy }, tools: { core: ["run_shell_command", "write_file"] } })
  )
  return marker
}

/** The environment of `parallel-llm` for the agents tier: the CLIs on PATH, each pointed at its fake, a home of its own. */
export const agentEnv = (fakes: AgentFakes, dirs: { readonly home: string; readonly codexHome: string; readonly outputDir: string }) => ({
  PATH: `${toolsBin}${path.delimiter}${process.env["PATH"] ?? ""}`,
  HOME: dirs.home,
  CODEX_HOME: dirs.codexHome,
  OPENROUTER_BASE_URL: fakes.openRouter.url,
  PARALLEL_LLM_OUTPUT_DIR: dirs.outputDir,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_RETRY_BASE_DELAY: "0.01",
  PARALLEL_LLM_CLI_AGENT_CONCURRENCY: "3",
  ANTHROPIC_BASE_URL: fakes.anthropic.url,
  ANTHROPIC_API_KEY: "sk-ant-fake",
  GOOGLE_GEMINI_BASE_URL: fakes.gemini.url,
  GEMINI_API_KEY: "fake-gemini-key",
  FAKE_OPENAI_KEY: "sk-fake-openai",
  // Codex reads no user config: its provider for the fake comes as `-c` overrides (codexConfig), dotted keys, no commas.
  PARALLEL_LLM_CODEX_CONFIG: [
    "model_provider=\"fake\"",
    "model_providers.fake.name=\"fake\"",
    `model_providers.fake.base_url="${fakes.openai.url}/v1"`,
    "model_providers.fake.wire_api=\"responses\"",
    "model_providers.fake.env_key=\"FAKE_OPENAI_KEY\"",
    "model_providers.fake.request_max_retries=0",
    "model_providers.fake.stream_max_retries=0"
  ].join(",")
})

/** The names of the tools a recorded model call offered, whatever the vendor's shape. */
export const toolNames = (call: RecordedCall): ReadonlyArray<string> => {
  const body = call.body as { tools?: ReadonlyArray<Record<string, unknown>> } | undefined
  return (body?.tools ?? []).flatMap((tool) => {
    const declarations = tool["functionDeclarations"]
    if (Array.isArray(declarations)) return declarations.map((d: { name?: string }) => String(d.name))
    return [String(tool["name"] ?? tool["type"])]
  })
}

/** Model calls only (not a CLI's side requests such as token counts). */
export const modelCalls = (fake: VendorFake): ReadonlyArray<RecordedCall> =>
  fake.calls.filter((c) => c.method === "POST" && /\/messages(\?|$)|\/responses$|:(stream)?[gG]enerateContent/.test(c.path))
