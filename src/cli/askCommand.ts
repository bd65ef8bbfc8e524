import { Effect, Option, Schedule } from "effect"
import { text as readAll } from "node:stream/consumers"
import { UsageError } from "../domain/errors.js"
import { summaryLine } from "../domain/format.js"
import { formatReport } from "../domain/reportFormat.js"
import { readTextSafely } from "../domain/safeFile.js"
import { collectAttachments } from "../programs/attachments/collect.js"
import type { RunEvent } from "../programs/run/request.js"
import { runPipeline } from "../programs/runPipeline.js"
import { strategyNamed, strategySteps } from "../programs/strategies/registry.js"
import { continueRun } from "../programs/thread/continueRun.js"
import { Logging } from "../services/logging.js"
import { ProcessIo } from "../services/processIo.js"
import { Settings } from "../services/settings.js"
import type { askCli } from "./askCli.js"
import type { ParsedArgs } from "./flags.js"
import { type Outcome, outcomeIf } from "./outcome.js"
import { writeStdout } from "./output.js"
import { makeProgressDisplay } from "./progressDisplay.js"
import { modelsGiven } from "./settingsOptions.js"

/** A prompt file is opened once and must be a regular file (never a FIFO waited on); --max-prompt-chars bounds it later. */
const PROMPT_FILE_READ = { maxBytes: 64 * 1024 * 1024, followLinks: true, timeout: "60 seconds" } as const

const readPrompt = Effect.fn("readPrompt")(function*(argument: Option.Option<string>, file: Option.Option<string>) {
  if (Option.isSome(argument) && Option.isSome(file)) {
    return yield* new UsageError({ message: "give the prompt as an argument or with --file, not both" })
  }
  const stdin = (yield* ProcessIo).stdin
  const prompt = Option.isSome(argument)
    ? argument.value
    : Option.isSome(file)
    ? yield* readTextSafely(file.value, PROMPT_FILE_READ).pipe(
      Effect.mapError((e) => new UsageError({ message: `--file: cannot read ${e.message}` }))
    )
    : stdin.isTTY
    ? yield* new UsageError({
      message: "no prompt: pass it as an argument, with --file PATH, or on standard input (see parallel-llm ask --help)"
    })
    : yield* Effect.tryPromise({
      try: () => readAll(stdin),
      catch: (e) => new UsageError({ message: `cannot read the prompt from standard input: ${String(e)}` })
    })
  if (prompt.trim() === "") return yield* new UsageError({ message: "the prompt is empty" })
  return prompt
})

/** `ask`: exit code 1 when the run produced no answer. */
export const ask = Effect.fn("ask")(function*(args: ParsedArgs<typeof askCli>) {
  const settings = yield* Settings
  const logging = yield* Logging
  const io = yield* ProcessIo
  const prompt = yield* readPrompt(args.prompt, args.file)
  const attachments = yield* collectAttachments(args.attach, { base: io.cwd, what: "--attach" })
  // On a terminal, a live line per model; elsewhere (pipes, CI, files) plain log lines.
  const display = io.stderr.isTTY ? makeProgressDisplay(io.stderr) : undefined
  const onEvent = (event: RunEvent) =>
    Effect.sync(() => {
      display?.onEvent(event)
      if (event._tag === "RunFinished") {
        display?.close()
        io.stderr.write(`${summaryLine(event.manifest, event.runDir, strategySteps(event.manifest.strategy))}\n`)
      }
    })
  // Spinners and elapsed times move between events too; the ticker ends with the run.
  const ticker = display
    ? Effect.forkScoped(Effect.repeat(Effect.sync(display.tick), Schedule.spaced("250 millis")))
    : Effect.void
  // The display draws log lines above its own; only warnings and errors, unless debugging.
  const drawLogs = display
    ? logging.useStderr((line, entry) => {
      if (settings.logLevel === "debug" || entry.level === "warning" || entry.level === "error") display.log(line)
    })
    : Effect.void
  // Models named with -m are the run's own, as an MCP call's are: `self` then says which it does not ask.
  const unsampled = strategyNamed(settings.strategy)?.warning(modelsGiven(args.settings) ? settings.models : undefined)
  const run = Effect.zipRight(
    unsampled === undefined ? Effect.void : Effect.logWarning(unsampled),
    Option.match(args.continue, {
      onNone: () => runPipeline({ prompt, attachments, onEvent }),
      onSome: (parent) => continueRun(parent, { prompt, attachments, onEvent })
    })
  )
  const result = yield* Effect.scoped(drawLogs.pipe(Effect.zipRight(ticker), Effect.zipRight(run)))
  if (args.json) {
    yield* writeStdout(JSON.stringify({ ...result.manifest, final: result.final ?? null, runDir: result.runDir }, null, 2))
  } else if (result.final !== undefined) {
    yield* writeStdout(result.final)
    if (args.report) yield* writeStdout(`\n${formatReport(result.manifest)}`)
  }
  return outcomeIf(result.final !== undefined) satisfies Outcome
})
