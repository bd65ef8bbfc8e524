import { Effect } from "effect"
import { RunRefused } from "../domain/errors.js"
import { readViewerPage } from "../services/viewerPage.js"
import { serveViewer } from "../viewer/viewerServer.js"
import type { ParsedArgs } from "./flags.js"
import { succeeded } from "./outcome.js"
import type { openCli } from "./runsOpenCli.js"

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
