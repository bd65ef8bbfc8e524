import { Cause, Effect, Exit, Option, Ref } from "effect"
import { RunRefused, UsageError } from "../domain/errors.js"
import { plural } from "../domain/format.js"
import type { Manifest } from "../domain/manifest.js"
import { readTextSafely, USER_FILE_READ } from "../domain/safeFile.js"
import { oneLine } from "../domain/text.js"
import { ModelClient } from "../services/modelClient.js"
import { Settings } from "../services/settings.js"
import { withOuterSpan } from "../services/tracing.js"
import type { SettingsValue } from "../settings/values.js"
import { type BadLine, type BatchItem, duplicateIdsMessage, parseBatchInput } from "./batchInput.js"
import { answeredIn, type BatchResult, openResultsFile, reportedBadLines } from "./batchResults.js"
import { type FoundRun, previousRunsFor } from "./batchResume.js"
import { withCallSettings } from "./callSettings.js"
import { agentsProblem } from "./checkRunRequest.js"
import { outsideCatalogue } from "./listConfiguredModels.js"
import { type BatchProgress, makeProgressRecorder, progressAtStart, type ProgressRecorder } from "./progressRecorder.js"
import { resynthesize } from "./resynthesize.js"
import type { RunEvent } from "./run/request.js"
import { runPipeline } from "./runPipeline.js"

export interface BatchOptions {
  readonly input: string
  readonly output: string
  /** Runs in flight at once. */
  readonly runs: number
  /** Called when the batch starts and after each prompt ends. */
  readonly onProgress?: ((progress: BatchProgress, last: BatchResult | undefined) => Effect.Effect<void>) | undefined
}

/**
 * Runs every prompt of a JSONL file, at most `runs` at a time; the HTTP calls of all of them share
 * the process's `CallGate`. Each prompt's result is appended to the results file the moment it ends,
 * so an interruption or a crash loses nothing, and a later pass skips what is already answered
 * (same id and same prompt) and retries the rest. Interrupted runs end `cancelled`.
 */
export const runBatch = Effect.fn("runBatch")(function*(options: BatchOptions) {
  const settings = yield* Settings
  const { items, bad } = yield* readBatchInput(options.input)
  const previous = yield* readTextSafely(options.output, USER_FILE_READ).pipe(
    Effect.catchIf((e) => e.reason === "missing", () => Effect.succeed("")),
    Effect.mapError((e) => new UsageError({ message: `cannot read the results file ${e.message}` }))
  )
  const todo = stillToDo(items, answeredIn(previous))
  // Runs of an earlier pass that never got their result line: recorded, or re-synthesized, not paid again.
  const onDisk = yield* previousRunsFor(options.output, todo)
  if (settings.checkModels && todo.length > 0) yield* checkModelsOnce(todo)

  const { appendLine } = yield* openResultsFile(options.output, previous)
  const recorder = yield* makeProgressRecorder({
    start: progressAtStart({ total: todo.length + bad.length, skipped: items.length - todo.length }),
    appendLine,
    tally: tallyInvalid,
    onProgress: options.onProgress
  })
  yield* Effect.logInfo(
    `batch: ${todo.length} prompt${todo.length === 1 ? "" : "s"} to run` +
      `${items.length > todo.length ? `, ${items.length - todo.length} already answered` : ""}` +
      `${bad.length > 0 ? `, ${bad.length} invalid line${bad.length === 1 ? "" : "s"}` : ""}; ` +
      `${settings.concurrency} calls and ${options.runs} runs in flight at most; results in ${options.output}`
  )
  yield* recorder.report(undefined)
  yield* recordBadLines(recorder, bad, reportedBadLines(previous))
  yield* announceOnDisk(onDisk)

  const runOne = runItem(settings, recorder)
  yield* Effect.forEach(todo, (item) => {
    const found = onDisk.get(item.id)
    return found?._tag === "Answered"
      ? recorder.record(resultOf(item, found.runDir, found.manifest))
      : runOne(item, found?.runId)
  }, { concurrency: options.runs, discard: true }).pipe(
    // Provided once for the batch rather than once a prompt (an `Effect.locally` each): a line with models of
    // its own is given its own (runOf).
    Effect.provideService(Settings, Settings.make(runSettingsFor(settings, settings.models)))
  )
  return yield* Ref.get(recorder.progress)
}, Effect.scoped)

/** The input file's prompts and invalid lines; a file with duplicate ids, or with nothing in it, is refused whole. */
const readBatchInput = Effect.fnUntraced(function*(input: string) {
  const text = yield* readTextSafely(input, USER_FILE_READ).pipe(
    Effect.mapError((e) => new UsageError({ message: `cannot read ${e.message}` }))
  )
  const { items, bad, duplicates } = parseBatchInput(text)
  if (duplicates.length > 0) return yield* new UsageError({ message: duplicateIdsMessage(input, duplicates) })
  if (items.length === 0 && bad.length === 0) {
    return yield* new UsageError({ message: `${input} holds no prompt (one JSON object per line: {"prompt": "..."})` })
  }
  return { items, bad }
})

/** The prompts without a result line, or whose line answered another prompt under the same id (the line was edited). */
const stillToDo = (items: ReadonlyArray<BatchItem>, answered: ReadonlyMap<string, string | undefined>) =>
  items.filter((item) => {
    if (!answered.has(item.id)) return true
    const sha = answered.get(item.id)
    return sha !== undefined && sha !== item.promptSha256
  })

type Recorder = ProgressRecorder<BatchProgress, BatchResult>

/** A bad line counts as invalid besides failed (it is in `total`, but no run was made for it). */
const tallyInvalid = (p: BatchProgress, result: BatchResult): BatchProgress => result.invalid ? { ...p, invalid: p.invalid + 1 } : p

/** A bad line is reported once in the results file; later passes count it (the batch still fails) without repeating it. */
const recordBadLines = (recorder: Recorder, bad: ReadonlyArray<BadLine>, reported: ReadonlySet<string>) =>
  Effect.forEach(bad, (line) => {
    const result: BatchResult = {
      id: line.id,
      runDir: null,
      status: "failed",
      cost: null,
      line: line.line,
      error: line.message,
      invalid: true
    }
    return reported.has(`${line.line}:${line.message}`) ? recorder.count(result) : recorder.record(result)
  }, { discard: true })

const announceOnDisk = (onDisk: ReadonlyMap<string, FoundRun>) => {
  if (onDisk.size === 0) return Effect.void
  const interrupted = [...onDisk.values()].filter((run) => run._tag === "Interrupted").length
  return Effect.logInfo(
    `batch: ${plural(onDisk.size - interrupted, "prompt")} answered by runs on disk (recorded, not asked again), ` +
      `${plural(interrupted, "interrupted run")} to synthesize again from the answers on disk`
  )
}

/** What a prompt's run said through its events: where it started, and the manifest it finished with. */
interface RunSeen {
  readonly startedDir?: string
  readonly finished?: { readonly manifest: Manifest; readonly runDir: string }
}

/** One prompt's run (or the re-synthesis of its interrupted run), recorded however it ends. */
const runItem = (settings: SettingsValue, recorder: Recorder) => (item: BatchItem, interrupted: string | undefined) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<RunSeen>({})
      const onEvent = (event: RunEvent) =>
        event._tag === "RunStarted"
          ? Ref.update(seen, (s) => ({ ...s, startedDir: event.run.dir }))
          : event._tag === "RunFinished"
          ? Ref.update(seen, (s) => ({ ...s, finished: { manifest: event.manifest, runDir: event.runDir } }))
          : Effect.void
      yield* recorder.started
      const exit = yield* restore(runOf(settings, item, interrupted, onEvent)).pipe(Effect.exit)
      const { startedDir, finished } = yield* Ref.get(seen)
      const result: BatchResult = finished !== undefined
        ? resultOf(item, finished.runDir, finished.manifest)
        : failedResult(item, startedDir ?? null, exit)
      if (result.status === "failed" && finished === undefined) yield* Effect.logWarning(`${item.id}: ${result.error}`)
      // Recorded even when the batch is being interrupted: that interruption then goes on stopping it.
      yield* recorder.ended(result)
    })
  )

/**
 * The Settings a prompt's run is given. In a batch the process-wide gate bounds the calls: a run's own fan-out does
 * not hold its candidates back.
 */
const runSettingsFor = (settings: SettingsValue, models: ReadonlyArray<string>): SettingsValue => ({
  ...settings,
  concurrency: models.length,
  checkModels: false
})

/**
 * Where a line's own values (its models, its synthesizer) become the run it asks for, on the batch's run Settings
 * (runBatch provides them), or on Settings of its own when the line names its models.
 */
const runOf = (
  settings: SettingsValue,
  item: BatchItem,
  interrupted: string | undefined,
  onEvent: (event: RunEvent) => Effect.Effect<void>
) => {
  const run = interrupted !== undefined
    ? resynthesize({ runId: interrupted, onEvent, deltas: false })
    : runPipeline({ prompt: item.prompt, onEvent, deltas: false }).pipe(
      // A line's own models and synthesizer are its settings, as an MCP call's arguments are.
      withCallSettings({ models: item.models, synthesizer: item.synthesizer })
    )
  const traced = withOuterSpan(run, "parallel_llm.batch_item", {
    parent: Option.none(),
    kind: "internal",
    attributes: { "parallel_llm.batch.item": item.id }
  })
  return item.models === undefined ? traced : Effect.provideService(traced, Settings, Settings.make(runSettingsFor(settings, item.models)))
}

/** A prompt's result line when its run never finished (it failed, or was interrupted, before a manifest). */
const failedResult = (item: BatchItem, runDir: string | null, exit: Exit.Exit<unknown, { readonly message: string }>): BatchResult => ({
  id: item.id,
  runDir,
  ...(Exit.isInterrupted(exit)
    ? { status: "cancelled", cost: null, line: item.line, error: "interrupted before the run started" }
    : { status: "failed", cost: null, line: item.line, error: failureText(exit) }),
  promptSha256: item.promptSha256
})

/** A prompt's result line from its run's manifest. */
const resultOf = (item: BatchItem, runDir: string, manifest: Manifest): BatchResult => ({
  id: item.id,
  runDir,
  // A run of this process ends with a status of its own, never a reader's `interrupted`.
  status: manifest.status === "interrupted" ? "cancelled" : manifest.status,
  cost: manifest.usage.cost ?? null,
  line: item.line,
  durationMs: manifest.durationMs,
  ...(manifest.error !== undefined ? { error: manifest.error } : {}),
  promptSha256: item.promptSha256
})

const failureText = (exit: Exit.Exit<unknown, { readonly message: string }>): string => {
  if (Exit.isSuccess(exit)) return "no result"
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) ? failure.value.message : `internal error: ${oneLine(Cause.pretty(exit.cause)).slice(0, 300)}`
}

/** `--check-models` once for the whole batch, not once per prompt: every model any line names. */
const checkModelsOnce = Effect.fn("runBatch.checkModels")(function*(items: ReadonlyArray<BatchItem>) {
  const settings = yield* Settings
  const client = yield* ModelClient
  const wanted = new Set<string>([...settings.models, settings.synthesizer, ...settings.fallbackSynthesizers])
  for (const item of items) {
    for (const model of item.models ?? []) wanted.add(model)
    if (item.synthesizer !== undefined) wanted.add(item.synthesizer)
  }
  const agentRefusal = yield* agentsProblem([...wanted], settings.codexConfig)
  if (agentRefusal !== undefined) return yield* new RunRefused({ message: agentRefusal })
  const known = yield* client.listModels().pipe(
    Effect.mapError((e) => new RunRefused({ message: `cannot check the models (--check-models): ${e.message}` }))
  )
  const ids = new Set(known.map((m) => m.id))
  const unknown = [...wanted].filter((m) => !ids.has(m) && !outsideCatalogue(m, settings.baseUrl))
  if (unknown.length > 0) {
    return yield* new RunRefused({
      message: `unknown model${unknown.length === 1 ? "" : "s"} at ${settings.baseUrl}: ${unknown.join(", ")} (see parallel-llm models)`
    })
  }
})
