import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { errorResult, text } from "../results.js"
import { readViewerData } from "../site/readViewerData.js"
import { RunId } from "./fields.js"
import { defineTool } from "./tool.js"

export const GetRunViewInput = Schema.Struct({ runId: RunId })

/**
 * The run page's own tool (app-only: a host never shows it to its model, and a client that renders no apps
 * never sees it): the run as the page shows it, the same data `runs open` serves, from the run directory.
 * The page calls it through its host while a run goes on, no faster than every 2 s.
 */
export const getRunViewTool = defineTool({
  name: "get_run_view",
  title: "A run, for the run page",
  description: "Returns a run as the run viewer page shows it: get_run's result, the manifest, the texts of its " +
    "files and a follow-up's thread. Called by the page, not by models.",
  input: GetRunViewInput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  needs: ["settings", "outputDir"],
  ui: "app",
  run: (input, context) =>
    readViewerData(context.runs, input.runId).pipe(
      Effect.map((data): CallToolResult => ({
        content: [text(`Run ${input.runId}: ${data.view.status}.`)],
        structuredContent: { ...data }
      })),
      Effect.catchAll((e) =>
        Effect.succeed(errorResult(e._tag === "UnknownRun" ? e.message : `Run ${input.runId} could not be read: ${e.message}`))
      )
    )
})
