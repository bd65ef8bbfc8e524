import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { LogSink } from "../services/Logging.js"

/**
 * Log lines to the MCP client as `notifications/message`, once the client has initialized the session.
 * The SDK's `Server` keeps the level the client asked for with `logging/setLevel` and drops anything
 * below it in `sendLoggingMessage`; lines below the server's own `--log-level` are never produced.
 * A line that cannot be sent (client gone) is dropped: logging must never disturb a run. The API key is
 * masked in every line.
 */
export const mcpLogSink = (server: Server, isReady: () => boolean, redact: (text: string) => string): LogSink => (entry) => {
  if (!isReady()) return
  const context = entry.context.length > 0 ? ` [${entry.context.join(" ")}]` : ""
  server.sendLoggingMessage({ level: entry.level, logger: "parallel-llm", data: redact(`${entry.text}${context}`) }).then(
    undefined,
    () => undefined
  )
}
