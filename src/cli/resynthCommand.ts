import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { summaryLine } from "../domain/format.js"
import { formatReport } from "../domain/reportFormat.js"
import { resynthesize } from "../programs/resynthesize.js"
import type { RunEvent } from "../programs/runPipeline.js"
import { outcomeIf } from "./outcome.js"
import { writeStdout } from "./output.js"
import { settingsOptions } from "./settingsOptions.js"

const resynthOptions = {
  runId: Args.text({ name: "run-id" }).pipe(Args.withDescription("The run whose answers to synthesize again.")),
  json: Options.boolean("json").pipe(Options.withDescription("Print the new run's manifest with a `final` field as JSON.")),
  report: Options.boolean("report").pipe(Options.withDescription("After the answer, print the new synthesis's disagreement report.")),
  ...settingsOptions
}

export const resynthCommand = Command.make("resynth", resynthOptions).pipe(
  Command.withDescription(
    "Synthesize a past run's answers again (say, with --synthesizer X) without asking the candidates again: a new run that names its source."
  )
)

/** `resynth`: exit code 1 when the new run produced no answer. */
export const resynth = Effect.fn("resynth")(function*(args: Command.Command.ParseConfig<typeof resynthOptions>) {
  const onEvent = (event: RunEvent) =>
    event._tag === "RunFinished"
      ? Effect.sync(() => process.stderr.write(`${summaryLine(event.manifest, event.runDir)}\n`))
      : Effect.void
  // The source run's synthesizer unless one is named here (on the command line: not the configured default).
  const synthesizer = Option.getOrUndefined(Option.filter(args.synthesizer, (s): s is string => typeof s === "string"))
  const result = yield* resynthesize({ runId: args.runId, synthesizer, onEvent })
  const out = args.json
    ? JSON.stringify({ ...result.manifest, final: result.final ?? null, runDir: result.runDir }, null, 2)
    : result.final !== undefined && args.report
    ? `${result.final}\n\n${formatReport(result.manifest)}`
    : result.final
  if (out !== undefined) yield* writeStdout(out)
  return outcomeIf(result.final !== undefined)
})
