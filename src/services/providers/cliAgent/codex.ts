import { Schema } from "effect"
import type { ModelPart } from "../../../domain/modelCall.js"
import { type AgentCli, agentFailure, exitFailure, lineDecoder, statusIn, textPart } from "./agentCli.js"
import type { LineDecoder } from "./agentProcess.js"

// Codex: `codex exec --json`, the prompt on stdin. Its events carry the agent's message whole (no text deltas).
// Answer only (docs/cli-agents.md): `--ignore-user-config` reads no ~/.codex/config.toml (its MCP servers, features,
// hooks, profiles), `--ignore-rules` no exec policy; the shell and exec tools, sub-agents, goals, apps, plugins, hooks,
// image generation, browser and computer use are turned off by `--disable`, web search by config, the sandbox is
// read-only and nothing is ever approved. What stays offered (`view_image`, `request_user_input`) cannot write or run
// anything. The login stays the user's: `--ignore-user-config` still reads the auth of CODEX_HOME. `codexConfig`
// (`--codex-config`) adds `-c` overrides before ours, e.g. a `model_provider` of the user's.

const DISABLED = [
  "shell_tool",
  "unified_exec",
  "multi_agent",
  "goals",
  "apps",
  "plugins",
  "hooks",
  "image_generation",
  "browser_use",
  "computer_use",
  "tool_suggest",
  "skill_search",
  "sleep_tool",
  "memories"
]

const AgentMessage = Schema.Struct({
  type: Schema.Literal("item.completed"),
  item: Schema.Struct({ type: Schema.Literal("agent_message"), text: Schema.String })
})

const TurnCompleted = Schema.Struct({
  type: Schema.Literal("turn.completed"),
  usage: Schema.optional(Schema.Struct({
    input_tokens: Schema.Number,
    output_tokens: Schema.Number,
    cached_input_tokens: Schema.optional(Schema.Number),
    reasoning_output_tokens: Schema.optional(Schema.Number)
  }))
})

const TurnFailed = Schema.Struct({
  type: Schema.Literal("turn.failed"),
  error: Schema.Struct({ message: Schema.String })
})

const decodeEvent = lineDecoder(Schema.Union(AgentMessage, TurnCompleted, TurnFailed))

/** Our `-c` overrides: after the user's `codexConfig`, so that theirs cannot turn a tool back on. */
const codexOverrides = (userConfig: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...userConfig.flatMap((entry) => ["-c", entry]),
  "-c",
  "approval_policy=\"never\"",
  "-c",
  "web_search=\"disabled\"",
  "-c",
  "mcp_servers={}"
]

/** The usage of a finished turn, as the call's `Usage` part. */
const usagePart = (usage: NonNullable<typeof TurnCompleted.Type["usage"]>): ModelPart => ({
  _tag: "Usage",
  usage: {
    promptTokens: usage.input_tokens,
    completionTokens: usage.output_tokens,
    ...(usage.cached_input_tokens ? { cachedTokens: usage.cached_input_tokens } : {}),
    ...(usage.reasoning_output_tokens ? { reasoningTokens: usage.reasoning_output_tokens } : {}),
    source: "subscription"
  }
})

/** Codex's events as parts: each agent message whole (a blank line between two), usage and the end at the turn's end. */
const decoderOf = (codex: AgentCli, model: string): LineDecoder => {
  let messages = 0
  return {
    line: (line) => {
      const event = decodeEvent(line)
      if (event === undefined) return []
      switch (event.type) {
        case "item.completed":
          return [textPart(messages++ === 0 ? event.item.text : `\n\n${event.item.text}`)]
        case "turn.failed":
          return agentFailure(codex, model, statusIn(event.error.message), event.error.message)
        case "turn.completed":
          return [...(event.usage !== undefined ? [usagePart(event.usage)] : []), { _tag: "Finish", reason: "stop", servedBy: model }]
      }
    },
    exit: exitFailure(codex, model)
  }
}

/** Codex with the user's `-c` overrides (`codexConfig`). */
export const codexWith = (userConfig: ReadonlyArray<string>): AgentCli => {
  const codex: AgentCli = {
    name: "codex",
    executable: "codex",
    install: "npm install -g @openai/codex",
    login: "codex login",
    systemFlag: false,
    args: (call) => [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--ephemeral",
      "--ignore-user-config",
      "--ignore-rules",
      "--sandbox",
      "read-only",
      "--color",
      "never",
      ...codexOverrides(userConfig),
      ...DISABLED.flatMap((feature) => ["--disable", feature]),
      ...(call.model !== undefined ? ["--model", call.model] : []),
      ...call.images.flatMap((image) => ["--image", image]),
      "-"
    ],
    env: () => ({}),
    files: () => [],
    decoder: (model) => decoderOf(codex, model),
    // With a provider of the user's (`codexConfig`), Codex's own login may not be what answers: it cannot say.
    ...(userConfig.length === 0 ? { loginCheck: { args: ["login", "status"], loggedIn: (code: number) => code === 0 } } : {})
  }
  return codex
}
