import { Command } from "@effect/cli"
import { Effect } from "effect"
import { serveMcp } from "../mcp/server.js"
import type { ServicesFor } from "./services.js"
import { settingsFromOptions, settingsOptions } from "./settingsOptions.js"

export const makeServeCommand = (servicesFor: ServicesFor) =>
  Command.make("serve", { ...settingsOptions }, (args) =>
    Effect.gen(function*() {
      const { settings } = yield* settingsFromOptions(args)
      yield* serveMcp({ settings, servicesFor })
    })).pipe(
      Command.withDescription(
        "Run as an MCP server on stdio (tools process_prompt, list_models, get_config; every run's files as resources). " +
          "Stdout carries only JSON-RPC; logs go to stderr, the log file and the MCP client. Ends when the client closes stdin."
      )
    )
