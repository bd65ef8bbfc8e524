import { Cause, Clock, Effect, Exit, Option, Ref } from "effect"
import { RunRefused, UsageError } from "../domain/errors.js"
import { plural, roundUsd } from "../domain/format.js"
import type { Manifest } from "../domain/manifest.js"
import { ModelClient } from "../services/modelClient.js"
import { readTextSafely, USER_FILE_READ } from "../services/safeFile.js"
import { Settings } from "../services/Settings.js"
import { type BatchItem, duplicateIdsMessage, oneLine, parseBatchInput } from "./batchInput.js"
import { answeredIn, type BatchResult, openResultsFile, reportedBadLines } from "./batchResults.js"
import { previousRunsFor } from "./batchResume.js"
import { resynthesize } from "./resynthesize.js"
import { type RunEvent, runPipeline } from "./runPipeline.js"

export { type BadLine, type BatchItem, BatchLine, type DuplicateId, duplicateIdsMessage, parseBatchInput } from "./batchInput.js"
export { answeredIn, type BatchResult, defaultResultsPath, reportedBadLines } from "./batchResults.js"

// --- Progress ---

export interface BatchProgress {
  /** Prompts this pass runs (answered ones skipped), and invalid lines. */
  readonly total: number
  readonly ok: number
  readonly partial: number
  readonly failed: number
  readonly cancelled: number
  /** Already answered in an earlier pass. */
  readonly skipped: number
  readonly invalid: number
  readonly inFlight: number
  readonly cost: number
  /** Runs that ended without the provider reporting what they cost: `cost` then leaves them out. */
  readonly unknownCost: number
  readonly elapsedMs: number
}

export const remainingOf = (p: BatchProgress): number => p.total - p.ok - p.partial - p.failed - p.cancelled

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

  const text = yield* readTextSafely(options.input, USER_FILE_READ).pipe(
    Effect.mapError((e) => new UsageError({ message: `cannot read ${e.message}` }))
  )
  const { items, bad, duplicates } = parseBatchInput(text)
  if (duplicates.length > 0) return yield* new UsageError({ message: duplicateIdsMessage(options.input, duplicates) })
  if (items.length === 0 && bad.length === 0) {
    return yield* new UsageError({ message: `${options.input} holds no prompt (one JSON object per line: {"prompt": "..."})` })
  }

  const previous = yield* readTextSafely(options.output, USER_FILE_READ).pipe(
    Effect.catchIf((e) => e.reason === "missing", () => Effect.succeed("")),
    Effect.mapError((e) => new UsageError({ message: `cannot read the results file ${e.message}` }))
  )
  const answered = answeredIn(previous)
  const todo = items.filter((item) => {
    if (!answered.has(item.id)) return true
    const sha = answered.get(item.id)
    return sha !== undefined && sha !== item.promptSha256
  })

  // Runs of an earlier pass that never got their result line: recorded, or re-synthesized, not paid again.
  const onDisk = yield* previousRunsFor(options.output, todo)
  if (settings.checkModels && todo.length > 0) yield* checkModelsOnce(todo)

  const { appendLine } = yield* openResultsFile(options.output, previous)
  const append = (result: BatchResult) => appendLine(result)

  const startedMs = yield* Clock.currentTimeMillis
  const progress = yield* Ref.make<BatchProgress>({
    total: todo.length + bad.length,
    ok: 0,
    partial: 0,
    failed: 0,
    cancelled: 0,
    skipped: items.length - todo.length,
    invalid: 0,
    inFlight: 0,
    cost: 0,
    unknownCost: 0,
    elapsedMs: 0
  })
  const report = (last: BatchResult | undefined) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const p = yield* Ref.updateAndGet(progress, (p) => ({ ...p, elapsedMs: now - startedMs }))
      if (options.onProgress) yield* options.onProgress(p, last)
    })
  const count = (result: BatchResult) =>
    Ref.update(progress, (p) => ({
      ...p,
      [result.status]: p[result.status] + 1,
      invalid: p.invalid + (result.invalid ? 1 : 0),
      cost: roundUsd(p.cost + (result.cost ?? 0)),
      unknownCost: p.unknownCost + (result.cost === null && result.runDir !== null ? 1 : 0)
    }))
  const record = (result: BatchResult) => append(result).pipe(Effect.zipRight(count(result)), Effect.zipRight(report(result)))

  yield* Effect.logInfo(
    `batch: ${todo.length} prompt${todo.length === 1 ? "" : "s"} to run` +
      `${items.length > todo.length ? `, ${items.length - todo.length} already answered` : ""}` +
      `${bad.length > 0 ? `, ${bad.length} invalid line${bad.length === 1 ? "" : "s"}` : ""}; ` +
      `${settings.concurrency} calls and ${options.runs} runs in flight at most; results in ${options.output}`
  )
  yield* report(undefined)

  // A bad line is reported once in the results file; later passes count it (the batch still fails) without repeating it.
  const reported = reportedBadLines(previous)
  for (const line of bad) {
    const result: BatchResult = {
      id: line.id,
      runDir: null,
      status: "failed",
      cost: null,
      line: line.line,
      error: line.message,
      invalid: true
    }
    yield* reported.has(`${line.line}:${line.message}`) ? count(result) : record(result)
  }

  if (onDisk.size > 0) {
    const interrupted = [...onDisk.values()].filter((run) => run._tag === "Interrupted").length
    yield* Effect.logInfo(
      `batch: ${plural(onDisk.size - interrupted, "prompt")} answered by runs on disk (recorded, not asked again), ` +
        `${plural(interrupted, "interrupted run")} to synthesize again from the answers on disk`
    )
  }
  const recordAnswered = (item: BatchItem, runDir: string, manifest: Manifest) => record(resultOf(item, runDir, manifest))

  const runOne = (item: BatchItem) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        // What the run's events said, kept in plain variables of this prompt.
        let finished: { readonly manifest: Manifest; readonly runDir: string } | undefined
        let startedDir: string | undefined
        const onEvent = (event: RunEvent) =>
          event._tag === "RunStarted"
            ? Effect.sync(() => {
              startedDir = event.run.dir
            })
            : event._tag === "RunFinished"
            ? Effect.sync(() => {
              finished = { manifest: event.manifest, runDir: event.runDir }
            })
            : Effect.void
        const models = item.models ?? settings.models
        // In a batch the process-wide gate bounds the calls: a run's own fan-out does not hold its candidates back.
        const runSettings = { ...settings, concurrency: models.length, checkModels: false }
        yield* Ref.update(progress, (p) => ({ ...p, inFlight: p.inFlight + 1 }))
        const interrupted = onDisk.get(item.id)
        const exit = yield* restore(
          (interrupted?._tag === "Interrupted"
            ? resynthesize({ runId: interrupted.runId, onEvent })
            : runPipeline({ prompt: item.prompt, models: item.models, synthesizer: item.synthesizer, onEvent })).pipe(
              Effect.provideService(Settings, runSettings)
            )
        ).pipe(Effect.exit)
        yield* Ref.update(progress, (p) => ({ ...p, inFlight: p.inFlight - 1 }))
        const done = finished
        const runDir = done?.runDir ?? startedDir ?? null
        const result: BatchResult = done !== undefined
          ? resultOf(item, done.runDir, done.manifest)
          : {
            id: item.id,
            runDir,
            ...(Exit.isInterrupted(exit)
              ? { status: "cancelled", cost: null, line: item.line, error: "interrupted before the run started" }
              : { status: "failed", cost: null, line: item.line, error: failureText(exit) }),
            promptSha256: item.promptSha256
          }
        if (result.status === "failed" && done === undefined) yield* Effect.logWarning(`${item.id}: ${result.error}`)
        // Recorded even when the batch is being interrupted: that interruption then goes on stopping it.
        yield* record(result)
      })
    )

  yield* Effect.forEach(todo, (item) => {
    const found = onDisk.get(item.id)
    return found?._tag === "Answered" ? recordAnswered(item, found.runDir, found.manifest) : runOne(item)
  }, { concurrency: options.runs, discard: true })
  return yield* Ref.get(progress)
}, Effect.scoped)

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
  const known = yield* client.listModels().pipe(
    Effect.mapError((e) => new RunRefused({ message: `cannot check the models (--check-models): ${e.message}` }))
  )
  const ids = new Set(known.map((m) => m.id))
  const unknown = [...wanted].filter((m) => !ids.has(m))
  if (unknown.length > 0) {
    return yield* new RunRefused({
      message: `unknown model${unknown.length === 1 ? "" : "s"} at ${settings.baseUrl}: ${unknown.join(", ")} (see parallel-llm models)`
    })
  }
})
