import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { Settings } from "../../services/Settings.js"
import { StartupProblems } from "../../settings/degraded.js"
import { describeSettings } from "../../settings/describe.js"
import { text } from "../results.js"
import { GetConfigOutput, NoArguments } from "../toolSchemas.js"
import { defineTool } from "./tool.js"

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
