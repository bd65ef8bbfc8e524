import { argument, defineCommand } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in runsOpenCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

export const openCli = defineCommand("open", {
  path: "runs open",
  summary: "Show a run in the browser: a viewer on loopback, until Ctrl-C",
  details: "Prints a one-time URL for this machine's browser; a running run is followed to its end.",
  args: {
    runId: argument("run-id", "The run's id, as `parallel-llm runs` lists it.")
  },
  flags: {},
  // The same settings as `runs show`: where the runs are.
  settings: "runs show"
})
