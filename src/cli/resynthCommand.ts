import { Effect, Option } from "effect"
import { summaryLine } from "../domain/format.js"
import { formatReport } from "../domain/reportFormat.js"
import { resynthesize } from "../programs/resynthesize.js"
import type { RunEvent } from "../programs/run/request.js"
import { strategySteps } from "../programs/strategies/registry.js"
import type { ParsedArgs } from "./flags.js"
import { outcomeIf } from "./outcome.js"
import { writeStderr, writeStdout } from "./output.js"
import type { resynthCli } from "./resynthCli.js"

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
