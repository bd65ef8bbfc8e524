import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Effect } from "effect"
import type { LogSink } from "../services/logging.js"

/** Marks the log lines about the server itself (refused HTTP requests): stderr and the log file only. */
export const serverOnly = Effect.annotateLogs("audience", "server")
const SERVER_ONLY = "audience=server"

/**
 * Log lines to the MCP client as `notifications/message`, once the client has initialized the session.
 * The SDK's `Server` keeps the level the client asked for with `logging/setLevel` and drops anything
 * below it in `sendLoggingMessage`; lines below the server's own `--log-level` are never produced.
 * A line that cannot be sent (client gone) is dropped: logging must never disturb a run. The API key is
 * masked in every line.
 */
export const mcpLogSink = (server: Server, isReady: () => boolean, redact: (text: string) => string): LogSink => (entry) => {
  if (!isReady() || entry.context.includes(SERVER_ONLY)) return
  const context = entry.context.length > 0 ? ` [${entry.context.join(" ")}]` : ""
  server.sendLoggingMessage({ level: entry.level, logger: "parallel-llm", data: redact(`${entry.text}${context}`) }).then(
    undefined,
    () => undefined
  )
}
