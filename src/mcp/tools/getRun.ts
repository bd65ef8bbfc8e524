import { Effect, Schema } from "effect"
import { RunOutput } from "../runOutput.js"
import { RunId, Wait } from "./fields.js"
import { waitForRun, waitMsOf } from "./runs.js"
import { defineTool } from "./tool.js"

export const GetRunInput = Schema.Struct({ runId: RunId, wait: Schema.optionalWith(Wait, { exact: true }) })

export const getRunTool = defineTool({
  name: "get_run",
  title: "Wait for a run and get its answer",
  description: "Waits up to `wait` seconds for a run, then returns it as process_prompt does (or \"running\" again). " +
    "Stopping this call never stops the run.",
  input: GetRunInput,
  output: RunOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  needs: ["settings", "outputDir"],
  ui: "view",
  run: (input, context) => Effect.flatMap(waitMsOf(input.wait), (waitMs) => waitForRun(context, input.runId, waitMs))
})
