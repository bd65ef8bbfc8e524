import { Command } from "@effect/cli"
import { Effect } from "effect"
import { serveMcp } from "../mcp/server.js"
import { succeeded } from "./outcome.js"
import { settingsOptions } from "./settingsOptions.js"

const serveOptions = { ...settingsOptions }

export const serveCommand = Command.make("serve", serveOptions).pipe(
  Command.withDescription(
    "Run as an MCP server on stdio (tools process_prompt, list_models, list_runs, resynthesize, get_config; every " +
      "run's files as resources). Stdout carries only JSON-RPC; logs go to stderr, the log file and the MCP client. " +
      "Ends when the client closes stdin."
  )
)

/** `serve`: until the client goes away. */
export const serve = Effect.fn("serve")(function*(_args: Command.Command.ParseConfig<typeof serveOptions>) {
  yield* serveMcp()
  return succeeded
})
