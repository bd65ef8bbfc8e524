import { Command } from "@effect/cli"
import { Effect } from "effect"
import { serveMcp } from "../mcp/server.js"
import { tools } from "../mcp/tools/index.js"
import { succeeded } from "./outcome.js"
import { settingsOptions } from "./settingsOptions.js"

const serveOptions = { ...settingsOptions }

export const serveCommand = Command.make("serve", serveOptions).pipe(
  Command.withDescription(
    `Run as an MCP server on stdio (tools ${tools.map((tool) => tool.name).join(", ")}; every run's files as ` +
      "resources). A call waits for its run at most --mcp-wait seconds, then answers `running` with the run id. " +
      "Stdout carries only JSON-RPC; logs go to stderr, the log file and the MCP client. Ends when the client closes stdin."
  )
)

/** `serve`: until the client goes away. */
export const serve = Effect.fn("serve")(function*(_args: Command.Command.ParseConfig<typeof serveOptions>) {
  yield* serveMcp()
  return succeeded
})
