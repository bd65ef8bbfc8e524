import { RunsLimit } from "../settings/kinds.js"
import { argument, defineCommand, integerFlagOr, switchFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in runsCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

export const showCli = defineCommand("show", {
  path: "runs show",
  summary: "Print a run's summary and its final answer",
  args: {
    runId: argument("run-id", "The run's id, as `parallel-llm runs` lists it.")
  },
  flags: {
    json: switchFlag({ name: "json", doc: "Print the manifest with a `final` field as JSON." }),
    report: switchFlag({ name: "report", doc: "After the answer, print the run's disagreement report." })
  },
  settings: "runs show"
})

export const runsCli = defineCommand("runs", {
  summary: "List recent runs, newest first",
  details: "Each with its id, time, status, answered/total, seconds, cost and prompt.",
  args: {},
  flags: {
    limit: integerFlagOr({ name: "limit", doc: "How many runs to list (1 to 10000)." }, 20, RunsLimit),
    json: switchFlag({ name: "json", doc: "Print the list as JSON." })
  },
  settings: "runs"
})
