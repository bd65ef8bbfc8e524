import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { resynthesize } from "../programs/resynthesize.js"
import type { RunEvent } from "../programs/runPipeline.js"
import { summaryLine, writeStdout } from "./askCommand.js"
import type { ServicesFor } from "./services.js"
import { settingsFromOptions, settingsOptions } from "./settingsOptions.js"

export const makeResynthCommand = (servicesFor: ServicesFor) =>
  Command.make(
    "resynth",
    {
      runId: Args.text({ name: "run-id" }).pipe(Args.withDescription("The run whose answers to synthesize again.")),
      json: Options.boolean("json").pipe(Options.withDescription("Print the new run's manifest with a `final` field as JSON.")),
      ...settingsOptions
    },
    (args) =>
      Effect.gen(function*() {
        const { settings, flags } = yield* settingsFromOptions(args)
        const onEvent = (event: RunEvent) =>
          event._tag === "RunFinished"
            ? Effect.sync(() => process.stderr.write(`${summaryLine(event.manifest, event.runDir)}\n`))
            : Effect.void
        // The source run's synthesizer unless one is named here.
        const result = yield* resynthesize({ runId: args.runId, synthesizer: flags.synthesizer, onEvent }).pipe(
          Effect.provide(servicesFor(settings))
        )
        const out = args.json
          ? JSON.stringify({ ...result.manifest, final: result.final ?? null, runDir: result.runDir }, null, 2)
          : result.final
        if (out !== undefined) yield* writeStdout(out)
        if (result.final === undefined) process.exitCode = 1
      })
  ).pipe(
    Command.withDescription(
      "Synthesize a past run's answers again (say, with --synthesizer X) without asking the candidates again: a new run that names its source."
    )
  )
