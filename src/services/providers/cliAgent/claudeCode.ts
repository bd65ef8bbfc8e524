import { Schema } from "effect"
import type { ModelPart, TokenUsage } from "../../../domain/modelCall.js"
import { type AgentCli, agentFailure, exitFailure, lineDecoder, textPart } from "./agentCli.js"

// Claude Code: `claude -p --output-format stream-json --verbose --include-partial-messages`, the prompt on stdin.
// Answer only (docs/cli-agents.md): `--tools ""` offers the model no tool at all, `--strict-mcp-config` with an empty
// `--mcp-config` loads no MCP server, `--setting-sources ""` and `--safe-mode` read no user, project or local settings,
// hooks, plugins, skills or CLAUDE.md that could add any back. The login stays the user's (~/.claude, or ANTHROPIC_API_KEY).

const TextDelta = Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String })

const StreamEvent = Schema.Struct({
  type: Schema.Literal("stream_event"),
  event: Schema.Struct({ type: Schema.Literal("content_block_delta"), delta: TextDelta })
})

/** The whole assistant message: its text, used only when no delta came (an older CLI without partial messages). */
const Assistant = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({
    content: Schema.Array(
      Schema.Union(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }), Schema.Struct({ type: Schema.String }))
    )
  })
})

/** The CLI retries a failed API call itself: we stop it and decide (only transient failures are retried, by `callModel`). */
const ApiRetry = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.Literal("api_retry"),
  error_status: Schema.NullishOr(Schema.Number),
  error: Schema.optional(Schema.String)
})

const Result = Schema.Struct({
  type: Schema.Literal("result"),
  is_error: Schema.Boolean,
  result: Schema.optional(Schema.String),
  api_error_status: Schema.optional(Schema.NullishOr(Schema.Number)),
  total_cost_usd: Schema.optional(Schema.Number),
  usage: Schema.optional(Schema.Struct({
    input_tokens: Schema.Number,
    output_tokens: Schema.Number,
    cache_read_input_tokens: Schema.optional(Schema.Number),
    cache_creation_input_tokens: Schema.optional(Schema.Number)
  })),
  modelUsage: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

const decodeEvent = lineDecoder(Schema.Union(StreamEvent, Assistant, ApiRetry, Result))

const usageOf = (result: typeof Result.Type): TokenUsage | undefined => {
  const usage = result.usage
  if (usage === undefined) return undefined
  const cached = usage.cache_read_input_tokens ?? 0
  return {
    // Claude counts cached and cache-writing input apart from `input_tokens`: all of it was read.
    promptTokens: usage.input_tokens + cached + (usage.cache_creation_input_tokens ?? 0),
    completionTokens: usage.output_tokens,
    ...(result.total_cost_usd !== undefined ? { cost: result.total_cost_usd } : {}),
    ...(cached > 0 ? { cachedTokens: cached } : {}),
    source: "subscription"
  }
}

export const claudeCode: AgentCli = {
  name: "claude-code",
  executable: "claude",
  install: "npm install -g @anthropic-ai/claude-code",
  login: "claude login",
  systemFlag: true,
  args: (call) => [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--tools",
    "",
    "--strict-mcp-config",
    "--mcp-config",
    "{\"mcpServers\":{}}",
    "--setting-sources",
    "",
    "--safe-mode",
    "--disable-slash-commands",
    "--no-session-persistence",
    ...(call.model !== undefined ? ["--model", call.model] : []),
    ...(call.system !== undefined ? ["--system-prompt", call.system] : [])
  ],
  env: () => ({ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" }),
  files: () => [],
  decoder: (model) => {
    let streamed = false
    return {
      line: (line): ReadonlyArray<ModelPart> | ReturnType<typeof agentFailure> => {
        const event = decodeEvent(line)
        if (event === undefined) return []
        switch (event.type) {
          case "stream_event":
            streamed = true
            return [textPart(event.event.delta.text)]
          case "assistant":
            if (streamed) return []
            streamed = true
            return event.message.content.flatMap((c) => ("text" in c && typeof c.text === "string" ? [textPart(c.text)] : []))
          case "system":
            return agentFailure(claudeCode, model, event.error_status ?? undefined, event.error ?? "the API call failed")
          case "result": {
            if (event.is_error) return agentFailure(claudeCode, model, event.api_error_status ?? undefined, event.result ?? "")
            const usage = usageOf(event)
            const served = Object.keys(event.modelUsage ?? {})[0]
            return [
              ...(!streamed && event.result !== undefined ? [textPart(event.result)] : []),
              ...(usage !== undefined ? [{ _tag: "Usage", usage } as const] : []),
              { _tag: "Finish", reason: "stop", servedBy: served !== undefined ? `claude-code/${served}` : model }
            ]
          }
        }
      },
      exit: exitFailure(claudeCode, model)
    }
  },
  loginCheck: { args: ["auth", "status"], loggedIn: (code, output) => code === 0 && /"loggedIn"\s*:\s*true/.test(output) }
}
