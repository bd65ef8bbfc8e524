import { Effect, Schema } from "effect"
import { withCallSettings } from "../../programs/callSettings.js"
import { continueRun as continueThread } from "../../programs/thread/continueRun.js"
import { perCallFields } from "../../settings/perCall.js"
import { Files, Prompt, RunId, Wait } from "./fields.js"
import { attachmentsOf } from "./processPrompt.js"
import { runFailure, startToolRun } from "./runs.js"
import { defineTool } from "./tool.js"

export const ContinueRunInput = Schema.Struct({
  runId: RunId,
  prompt: Prompt.annotations({ description: "The follow-up question." }),
  ...perCallFields("models", "synthesizer", "deadline", "quorum", "grace", "rounds", "samples"),
  wait: Schema.optionalWith(Wait, { exact: true }),
  files: Schema.optionalWith(Files, { exact: true }),
  ...perCallFields("preset")
})

export const continueRunTool = defineTool({
  name: "continue_run",
  title: "Ask a follow-up question",
  description: "Asks a finished run a follow-up question; every model sees the conversation so far. Makes a new run; " +
    "returns like process_prompt.",
  input: ContinueRunInput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  needs: ["settings", "key", "outputDir"],
  ui: "view",
  tasks: true,
  run: ({ files, prompt, runId, wait, ...settings }, context) =>
    startToolRun(
      context,
      wait,
      (onEvent) =>
        Effect.flatMap(attachmentsOf(files, context), (attachments) => continueThread(runId, { prompt, attachments, onEvent })).pipe(
          withCallSettings(settings),
          Effect.mapError(runFailure)
        )
    )
})
