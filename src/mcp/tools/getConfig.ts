import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { describeSettings, Settings } from "../../services/Settings.js"
import { text } from "../results.js"
import { GetConfigOutput, NoArguments } from "../toolSchemas.js"
import { defineTool } from "./tool.js"

export const getConfig = defineTool({
  name: "get_config",
  title: "Show the effective settings",
  description: "The server's effective settings (models, timeouts, retries, output directory, …). The API key is never shown.",
  input: NoArguments,
  output: GetConfigOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: () =>
    Effect.gen(function*() {
      const settings = yield* Settings
      // describeSettings never includes the key; encoding keeps exactly the advertised fields.
      const structuredContent = yield* Schema.encode(GetConfigOutput)(describeSettings(settings)).pipe(Effect.orDie)
      return { content: [text(JSON.stringify(structuredContent, null, 2))], structuredContent } satisfies CallToolResult
    })
})
