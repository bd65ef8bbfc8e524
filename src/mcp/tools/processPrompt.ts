import { Effect } from "effect"
import { runPipeline } from "../../programs/runPipeline.js"
import { RunOutput } from "../runOutput.js"
import { ProcessPromptInput } from "../toolSchemas.js"
import { runFailure, startRun } from "./runs.js"
import { defineTool } from "./tool.js"

const seconds = (s: number | undefined) => (s === undefined ? undefined : Math.round(s * 1000))

export const processPrompt = defineTool({
  name: "process_prompt",
  title: "Ask several LLMs and synthesize",
  description: "Sends the prompt to several LLMs at once (the configured candidates, or `models`), keeps every answer, and has " +
    "a synthesizer merge them into one answer better than any single one. A run takes 1 to 3 minutes: if it is not done " +
    "within `wait` seconds the result has status \"running\" and a runId — call get_run with that runId to wait for the answer.",
  input: ProcessPromptInput,
  output: RunOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  tasks: true,
  run: (input, context) =>
    startRun(context, input.wait, (onEvent) =>
      runPipeline({
        prompt: input.prompt,
        models: input.models,
        synthesizer: input.synthesizer,
        deadlineMs: seconds(input.deadline),
        quorum: input.quorum,
        graceMs: seconds(input.grace),
        strategy: input.strategy,
        rounds: input.rounds,
        samples: input.samples,
        onEvent
      }).pipe(Effect.mapError(runFailure)))
})
