import { Effect, Schema } from "effect"
import { resynthesize } from "../../programs/resynthesize.js"
import { perCallFields } from "../../settings/perCall.js"
import { RunId, Wait } from "./fields.js"
import { runFailure, startToolRun } from "./runs.js"
import { defineTool } from "./tool.js"

export const ResynthesizeInput = Schema.Struct({
  runId: RunId,
  // Default: the run's synthesizer (not the server's: see programs/resynthesize.ts).
  ...perCallFields("synthesizer"),
  wait: Schema.optionalWith(Wait, { exact: true })
})

export const resynthesizeTool = defineTool({
  name: "resynthesize",
  title: "Synthesize a past run again",
  description: "Merges a past run's stored answers again (even a failed or cancelled one), optionally with another " +
    "synthesizer; only the synthesis is paid. Makes a new run; returns like process_prompt.",
  input: ResynthesizeInput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  needs: ["settings", "key", "outputDir"],
  ui: "view",
  tasks: true,
  run: (input, context) =>
    startToolRun(
      context,
      input.wait,
      (onEvent) => resynthesize({ runId: input.runId, synthesizer: input.synthesizer, onEvent }).pipe(Effect.mapError(runFailure))
    )
})
