import { Effect, Option, Schedule } from "effect"
import * as path from "node:path"
import { UsageError } from "../domain/errors.js"
import { formatUsd } from "../domain/format.js"
import { stripControl } from "../domain/text.js"
import { holdResultsLock, isSameFile } from "../programs/batchLock.js"
import { type BatchResult, defaultResultsPath } from "../programs/batchResults.js"
import { type BatchProgress, remainingOf } from "../programs/progressRecorder.js"
import { runBatch } from "../programs/runBatch.js"
import { strategyNamed } from "../programs/strategies/registry.js"

import { Logging } from "../services/logging.js"
import { ProcessIo } from "../services/processIo.js"
import { Settings } from "../services/settings.js"
import { withoutSpansUnlessExported } from "../services/tracing.js"
import type { batchCli } from "./batchCli.js"
import { makeProgressView, progressText, type ProgressWords } from "./batchProgress.js"
import type { ParsedArgs } from "./flags.js"
import { outcomeIf } from "./outcome.js"
import { modelsGiven } from "./settingsOptions.js"

const resultText = (r: BatchResult): string =>
  stripControl(
    `${r.id} (line ${r.line}) ${r.status}${r.cost !== null ? ` ${formatUsd(r.cost)}` : r.runDir !== null ? " cost unknown" : ""}` +
      `${r.error !== undefined ? `: ${r.error}` : ""}`
  )

const batchWords: ProgressWords<BatchProgress, BatchResult> = {
  status: (p) => `parallel-llm batch: ${progressText(p)}`,
  trouble: (r) => `  ${r.status === "failed" ? "✗" : "⊘"} ${resultText(r)}\n`,
  ended: (p, r) => `parallel-llm batch: ${resultText(r)} · ${progressText(p)}\n`
}

/** `batch`: exit code 1 when a prompt failed or was cancelled. Needs the CallGate of `batchLayer`. */
export const batch = Effect.fn("batch")(function*(args: ParsedArgs<typeof batchCli>) {
  // Its V8 flag (the heap grows by half between full collections) is set by the bin's loader before the bundle
  // is compiled, where it does not spoil the code cache (COMMAND_V8_FLAGS in scripts/bundle.mjs).
  if (!Number.isInteger(args.runs) || args.runs < 1 || args.runs > 1024) {
    return yield* new UsageError({ message: `--runs must be a whole number from 1 to 1024, got ${args.runs}` })
  }
  const input = path.resolve(args.file)
  const output = path.resolve(Option.getOrElse(args.out, () => defaultResultsPath(args.file)))
  // A symlink or a hard link to the input is the input too.
  if (output === input || (yield* isSameFile(input, output))) {
    return yield* new UsageError({ message: "--out must not be the input file" })
  }

  const io = yield* ProcessIo
  const view = makeProgressView(io.stderr, batchWords)
  const logging = yield* Logging
  // Models named with -m, as in ask: `self` says once which of them it does not ask (a line's own models, per run).
  const settings = yield* Settings
  const named = modelsGiven(args.settings) ? settings.models : undefined
  const unsampled = strategyNamed(settings.strategy)?.warning(named)
  const ticker = view.tty ? Effect.sync(() => view.tick()).pipe(Effect.repeat(Schedule.spaced("1 second"))) : Effect.never

  const final = yield* Effect.zipRight(
    // One batch per results file: held until the batch ends, before the results are read.
    Effect.zipRight(logging.useStderr((line) => view.log(line)), holdResultsLock(output, args.waitLock)).pipe(
      Effect.zipLeft(unsampled === undefined ? Effect.void : Effect.logWarning(unsampled))
    ),
    runBatch({
      input,
      output,
      runs: args.runs,
      onProgress: (p, last) => Effect.sync(() => view.update(p, last))
    })
  ).pipe(
    // Unless they are exported (docs/tracing.md), spans are only ever looked at in error reports, and a batch
    // records its failures as text: thousands of calls are cheaper without them.
    withoutSpansUnlessExported,
    Effect.raceFirst(Effect.andThen(ticker, Effect.never)),
    Effect.ensuring(Effect.sync(() => view.end())),
    Effect.onInterrupt(() =>
      Effect.sync(() => {
        const p = view.latest()
        io.stderr.write(
          `parallel-llm: batch interrupted${
            p ? `: ${progressText(p)}` : ""
          } · results so far in ${output}; run the same command again to resume\n`
        )
      })
    ),
    Effect.scoped
  )
  io.stderr.write(`parallel-llm: batch ${remainingOf(final) === 0 ? "done" : "stopped"}: ${progressText(final)} · ${output}\n`)
  return outcomeIf(final.failed === 0 && final.cancelled === 0)
})
