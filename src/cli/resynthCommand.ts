import { Effect, Option } from "effect"
import { summaryLine } from "../domain/format.js"
import { formatReport } from "../domain/reportFormat.js"
import { resynthesize } from "../programs/resynthesize.js"
import type { RunEvent } from "../programs/run/request.js"
import { strategySteps } from "../programs/strategies/registry.js"
import { argument, defineCommand, type ParsedArgs, switchFlag } from "./flags.js"
import { outcomeIf } from "./outcome.js"
import { writeStderr, writeStdout } from "./output.js"

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

export const resynthCommand = resynthCli.command

/** `resynth`: exit code 1 when the new run produced no answer. */
export const resynth = Effect.fn("resynth")(function*(args: ParsedArgs<typeof resynthCli>) {
  const onEvent = (event: RunEvent) =>
    event._tag === "RunFinished"
      ? writeStderr(`${summaryLine(event.manifest, event.runDir, strategySteps(event.manifest.strategy))}\n`)
      : Effect.void
  // The source run's synthesizer unless one is named here (on the command line: not the configured default).
  const synthesizer = Option.getOrUndefined(
    Option.filter(args.settings.synthesizer ?? Option.none(), (s): s is string => typeof s === "string")
  )
  const result = yield* resynthesize({ runId: args.runId, synthesizer, onEvent })
  const out = args.json
    ? JSON.stringify({ ...result.manifest, final: result.final ?? null, runDir: result.runDir }, null, 2)
    : result.final !== undefined && args.report
    ? `${result.final}\n\n${formatReport(result.manifest)}`
    : result.final
  if (out !== undefined) yield* writeStdout(out)
  return outcomeIf(result.final !== undefined)
})
