import { Effect } from "effect"
import { RunRefused } from "../domain/errors.js"
import { readViewerPage } from "../services/viewerPage.js"
import { serveViewer } from "../viewer/viewerServer.js"
import { argument, defineCommand, type ParsedArgs } from "./flags.js"
import { succeeded } from "./outcome.js"

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

export const openCommand = openCli.command

/** `runs open ID`: an unknown run is refused (exit 2); otherwise it serves until interrupted. */
export const open = (args: ParsedArgs<typeof openCli>) =>
  Effect.gen(function*() {
    const page = yield* readViewerPage
    yield* serveViewer(args.runId, page).pipe(
      Effect.catchTag("UnknownRun", (e) => new RunRefused({ message: e.message.replace(" (see list_runs)", " (see parallel-llm runs)") })),
      Effect.scoped
    )
    return succeeded
  })
