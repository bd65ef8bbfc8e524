import { Effect } from "effect"
import { continueRun } from "../../programs/thread/continueRun.js"
import { ContinueRunInput } from "../toolSchemas.js"
import { attachmentsOf, callOverrides, withPreset } from "./processPrompt.js"
import { runFailure, startToolRun } from "./runs.js"
import { defineTool } from "./tool.js"

export const continueRunTool = defineTool({
  name: "continue_run",
  title: "Ask a follow-up question",
  description: "Asks a finished run a follow-up question; every model sees the conversation so far. Makes a new run; " +
    "returns like process_prompt.",
  input: ContinueRunInput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  needs: ["settings", "key", "outputDir"],
  tasks: true,
  run: (input, context) =>
    startToolRun(
      context,
      input.wait,
      (onEvent) =>
        Effect.flatMap(attachmentsOf(input.files, context), (attachments) =>
          continueRun(input.runId, {
            prompt: input.prompt,
            attachments,
            ...callOverrides(input),
            onEvent
          })).pipe(withPreset(input.preset), Effect.mapError(runFailure))
    )
})
