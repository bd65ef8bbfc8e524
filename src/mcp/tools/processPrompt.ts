import { Effect, Schema } from "effect"
import { collectAttachments } from "../../programs/attachments/collect.js"
import { withCallSettings } from "../../programs/callSettings.js"
import { runPipeline } from "../../programs/runPipeline.js"
import { StrategyName } from "../../programs/strategies/registry.js"
import { perCallFields } from "../../settings/perCall.js"
import { settingsTable } from "../../settings/table.js"
import { RunOutput } from "../runOutput.js"
import { Files, Prompt, Wait } from "./fields.js"
import { runFailure, startToolRun } from "./runs.js"
import { defineTool, type ToolContext } from "./tool.js"

export const ProcessPromptInput = Schema.Struct({
  prompt: Prompt.annotations({ description: "The whole question or task, as you would ask one model." }),
  // The per-call settings: each one, and how a call's value is checked, is the settings table's.
  ...perCallFields("models", "synthesizer", "deadline", "quorum", "grace", "rounds", "samples"),
  wait: Schema.optionalWith(Wait, { exact: true }),
  files: Schema.optionalWith(Files, { exact: true }),
  ...perCallFields("web", "strategy", "preset"),
  // The strategies are the registry's (src/programs/strategies/registry.ts): the settings below it take any name.
  strategy: Schema.optionalWith(StrategyName.annotations({ description: settingsTable.strategy.mcp.description }), { exact: true })
})
export type ProcessPromptInput = typeof ProcessPromptInput.Type

/** The files of a call, read and checked against the connection's roots before the run starts: a refused one costs nothing. */
export const attachmentsOf = (files: ReadonlyArray<string> | undefined, context: ToolContext) =>
  files === undefined || files.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(context.fileRoots, (roots) => collectAttachments(files, { base: roots.base, allowed: roots.allowed, what: "files" }))

export const processPromptTool = defineTool({
  name: "process_prompt",
  title: "Ask several LLMs and synthesize",
  description: "Asks several LLMs the same prompt at once; returns one synthesized answer and where they disagree. " +
    "Unset arguments take the server's settings. A run that outlasts `wait` answers status \"running\" with a runId: " +
    "call get_run.",
  input: ProcessPromptInput,
  output: RunOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  needs: ["settings", "key", "outputDir"],
  ui: "view",
  tasks: true,
  run: ({ files, prompt, wait, ...settings }, context) =>
    startToolRun(
      context,
      wait,
      (onEvent) =>
        Effect.flatMap(attachmentsOf(files, context), (attachments) => runPipeline({ prompt, attachments, onEvent })).pipe(
          withCallSettings(settings),
          Effect.mapError(runFailure)
        )
    )
})
