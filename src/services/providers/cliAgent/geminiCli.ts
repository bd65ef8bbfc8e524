import { Schema } from "effect"
import type { ModelPart } from "../../../domain/modelCall.js"
import { type AgentCli, agentFailure, type AgentFile, exitFailure, lineDecoder, statusIn, textPart } from "./agentCli.js"

// Gemini CLI: `gemini -p "" -o stream-json`, the prompt on stdin. Answer only (docs/cli-agents.md): its home is the
// call's own (`GEMINI_CLI_HOME`), whose settings.json allows no core tool, no MCP server, extension, skill, hook or
// agent, so no user or system settings of the user's are read; `--approval-mode plan` is its read-only mode, and it
// trusts only the call's working directory (`--skip-trust`). The login stays the user's: GEMINI_API_KEY /
// GOOGLE_API_KEY / Vertex from the environment, or the files of a Google sign-in linked from ~/.gemini.

/** The user's login files, linked into the call's home (a Google sign-in; an API key comes by environment). */
const LOGIN_FILES = ["oauth_creds.json", "google_accounts.json"]

const SYSTEM_FILE = "system.md"

/** The auth type, as the user's environment chooses it: the key or Vertex when set, else the Google sign-in. */
const authType = (env: Readonly<Record<string, string>>): string =>
  env["GEMINI_API_KEY"] ? "gemini-api-key" : env["GOOGLE_GENAI_USE_VERTEXAI"] === "true" ? "vertex-ai" : "oauth-personal"

const settings = (env: Readonly<Record<string, string>>) => ({
  security: { auth: { selectedType: authType(env) } },
  // An allow-list naming no tool: no built-in tool is registered at all.
  tools: { core: ["none"] },
  mcpServers: {},
  admin: { mcp: { enabled: false }, extensions: { enabled: false }, skills: { enabled: false } },
  skills: { enabled: false },
  hooksConfig: { enabled: false },
  experimental: { enableAgents: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, checkpointing: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false }
})

const Message = Schema.Struct({ type: Schema.Literal("message"), role: Schema.Literal("assistant"), content: Schema.String })

const Init = Schema.Struct({ type: Schema.Literal("init"), model: Schema.optional(Schema.String) })

const Result = Schema.Struct({
  type: Schema.Literal("result"),
  status: Schema.String,
  error: Schema.optional(Schema.Struct({ message: Schema.String })),
  stats: Schema.optional(Schema.Struct({
    input_tokens: Schema.Number,
    output_tokens: Schema.Number,
    cached: Schema.optional(Schema.Number)
  }))
})

const decodeEvent = lineDecoder(Schema.Union(Message, Init, Result))

export const geminiCli: AgentCli = {
  name: "gemini-cli",
  executable: "gemini",
  install: "npm install -g @google/gemini-cli",
  login: "gemini",
  // The system message replaces the CLI's own agent prompt, from a file (`GEMINI_SYSTEM_MD`).
  systemFlag: true,
  args: (call) => [
    "-p",
    "",
    "--output-format",
    "stream-json",
    "--approval-mode",
    "plan",
    "--skip-trust",
    ...(call.model !== undefined ? ["--model", call.model] : [])
  ],
  env: (call) => ({
    GEMINI_CLI_HOME: call.scratch,
    GEMINI_CLI_NO_RELAUNCH: "true",
    NO_COLOR: "1",
    ...(call.system !== undefined ? { GEMINI_SYSTEM_MD: `${call.scratch}/${SYSTEM_FILE}` } : {})
  }),
  files: (call, env): ReadonlyArray<AgentFile> => [
    { path: ".gemini/settings.json", text: JSON.stringify(settings(env)) },
    ...(call.system !== undefined ? [{ path: SYSTEM_FILE, text: call.system }] : []),
    ...LOGIN_FILES.map((name) => ({ path: `.gemini/${name}`, linkTo: `${call.home}/.gemini/${name}` }))
  ],
  decoder: (model) => {
    let servedBy = model
    return {
      line: (line): ReadonlyArray<ModelPart> | ReturnType<typeof agentFailure> => {
        const event = decodeEvent(line)
        if (event === undefined) return []
        switch (event.type) {
          case "init":
            if (event.model !== undefined) servedBy = `gemini-cli/${event.model}`
            return []
          case "message":
            return [textPart(event.content)]
          case "result": {
            if (event.status !== "success") {
              const message = event.error?.message ?? event.status
              return agentFailure(geminiCli, model, statusIn(message), message)
            }
            const stats = event.stats
            return [
              ...(stats !== undefined
                ? [{
                  _tag: "Usage" as const,
                  usage: {
                    promptTokens: stats.input_tokens,
                    completionTokens: stats.output_tokens,
                    ...(stats.cached ? { cachedTokens: stats.cached } : {}),
                    source: "subscription" as const
                  }
                }]
                : []),
              { _tag: "Finish", reason: "stop", servedBy }
            ]
          }
        }
      },
      exit: exitFailure(geminiCli, model)
    }
  }
}
