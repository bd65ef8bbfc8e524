import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { Settings } from "../../services/settings.js"
import { StartupProblems } from "../../settings/degraded.js"
import { describeSettings, SettingsDescription } from "../../settings/describe.js"
import { text } from "../results.js"
import { NoArguments } from "./fields.js"
import { defineTool } from "./tool.js"

/** The effective settings, as the settings table describes them (never the key); advertised in a line. */
export const GetConfigOutput = SettingsDescription.annotations({
  jsonSchema: { type: "object", description: "Each effective setting by name; apiKey is only ever \"<redacted>\" or \"<not set>\"." }
})
export type GetConfigOutput = typeof GetConfigOutput.Type

export const getConfigTool = defineTool({
  name: "get_config",
  title: "Show the effective settings",
  description: "The server's effective settings (never the API key), or what stops it from working.",
  input: NoArguments,
  output: GetConfigOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  // It needs nothing: the problems a server started with are its answer, with the settings it could read.
  needs: [],
  run: () =>
    Effect.gen(function*() {
      const settings = yield* Settings
      // describeSettings never includes the key; encoding keeps exactly the advertised fields.
      const structuredContent = yield* Schema.encode(GetConfigOutput)(describeSettings(settings)).pipe(Effect.orDie)
      const shown = JSON.stringify(structuredContent, null, 2)
      const problems = yield* StartupProblems
      if (problems.length > 0) {
        return {
          content: [
            text(`The server cannot work until this is fixed: ${problems.map((p) => p.message).join(" Also: ")}`),
            text(`The settings in effect meanwhile:\n${shown}`)
          ],
          isError: true
        } satisfies CallToolResult
      }
      return { content: [text(shown)], structuredContent } satisfies CallToolResult
    })
})
