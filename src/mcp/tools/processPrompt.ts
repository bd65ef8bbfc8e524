import { Effect, Either } from "effect"
import { RunRefused } from "../../domain/errors.js"
import { collectAttachments } from "../../programs/attachments/collect.js"
import { runPipeline } from "../../programs/runPipeline.js"
import { Settings } from "../../services/Settings.js"
import type { McpOverrides } from "../../settings/mcpOverrides.js"
import { applyPreset } from "../../settings/presets.js"
import { secondsToMs } from "../../settings/setting.js"
import { RunOutput } from "../runOutput.js"
import { ProcessPromptInput } from "../toolSchemas.js"
import { runFailure, startToolRun } from "./runs.js"
import { defineTool, type ToolContext } from "./tool.js"

/** The files of a call, read and checked against the connection's roots before the run starts: a refused one costs nothing. */
export const attachmentsOf = (files: ReadonlyArray<string> | undefined, context: ToolContext) =>
  files === undefined || files.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(context.fileRoots, (roots) => collectAttachments(files, { base: roots.base, allowed: roots.allowed, what: "files" }))

const seconds = (s: number | undefined) => (s === undefined ? undefined : secondsToMs(s))

/**
 * The run settings a call may override (models, synthesizer, and every per-call setting of the table), in the
 * run's units: one mapping for each tool that takes them, so no tool advertises an argument it then ignores.
 */
export const callOverrides = (
  input: {
    readonly models?: ReadonlyArray<string> | undefined
    readonly synthesizer?: string | undefined
  } & McpOverrides
) => ({
  models: input.models,
  synthesizer: input.synthesizer,
  deadlineMs: seconds(input.deadline),
  quorum: input.quorum,
  graceMs: seconds(input.grace),
  rounds: input.rounds,
  samples: input.samples
})

/** The call's preset over the server's settings; the call's own arguments, which the run applies, beat both. */
export const withPreset =
  (name: string | undefined) => <A, E, R>(run: Effect.Effect<A, E, R>): Effect.Effect<A, E | RunRefused, R | Settings> =>
    name === undefined ? run : Effect.flatMap(Settings, (settings) =>
      Either.match(applyPreset(settings, name), {
        onLeft: (message): Effect.Effect<A, E | RunRefused, R> => Effect.fail(new RunRefused({ message })),
        onRight: (preset) => Effect.provideService(run, Settings, Settings.make(preset))
      }))

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
  tasks: true,
  run: (input, context) =>
    startToolRun(context, input.wait, (onEvent) =>
      Effect.flatMap(attachmentsOf(input.files, context), (attachments) =>
        runPipeline({
          prompt: input.prompt,
          attachments,
          ...callOverrides(input),
          web: input.web,
          strategy: input.strategy,
          onEvent
        })).pipe(withPreset(input.preset), Effect.mapError(runFailure)))
})
