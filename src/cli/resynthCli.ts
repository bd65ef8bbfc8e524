import { argument, defineCommand, switchFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in resynthCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

export const resynthCli = defineCommand("resynth", {
  summary: "Synthesize a past run's answers again",
  details: "Without asking the candidates again: a new run that names its source, synthesized by the source run's " +
    "synthesizer unless --synthesizer names another. On OpenRouter, --cache makes a re-synthesis of the same " +
    "answers with the same synthesizer free within its TTL.",
  args: {
    runId: argument("run-id", "The run whose answers to synthesize again.")
  },
  flags: {
    json: switchFlag({ name: "json", doc: "Print the new run's manifest with a `final` field as JSON." }),
    report: switchFlag({ name: "report", doc: "After the answer, print the new synthesis's disagreement report." })
  },
  settings: "resynth"
})
