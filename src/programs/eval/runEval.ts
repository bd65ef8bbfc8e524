import { FileSystem } from "@effect/platform"
import { Clock, Effect, Exit, Option, Ref } from "effect"
import { plainFsReason, UsageError } from "../../domain/errors.js"
import { roundUsd } from "../../domain/format.js"
import type { StrategyName } from "../../domain/strategy.js"
import { Settings } from "../../services/Settings.js"
import { openResultsFile } from "../batchResults.js"
import { checkRunRequest } from "../checkRunRequest.js"
import { resynthesize } from "../resynthesize.js"
import type { BatchProgress } from "../runBatch.js"
import type { RunEvent, RunResult } from "../runPipeline.js"
import { tooManySamples } from "../strategies/self.js"
import { type EvalItem, fingerprintOf } from "./dataset.js"
import { type EvalResult, failureText, keyOf, lastResults, rescore, resultOf } from "./evalResults.js"
import { evalRunsOnDisk } from "./evalResume.js"
import type { Scorer } from "./scorers.js"
import { asksCandidates, runStrategy } from "./strategies.js"

// Runs every selected item through every strategy, a few runs at a time, and appends one result line per
// run to the results file the moment it ends, so that a second pass pays nothing for what is done.

export { defaultEvalResultsPath, EvalResult, lastResults } from "./evalResults.js"

export type EvalProgress = BatchProgress & { readonly correct: number }

export interface EvalOptions {
  readonly items: ReadonlyArray<EvalItem>
  readonly strategies: ReadonlyArray<StrategyName>
  readonly scorer: Scorer
  readonly output: string
  /** Runs in flight at once. */
  readonly runs: number
  readonly onProgress?: ((progress: EvalProgress, last: EvalResult | undefined) => Effect.Effect<void>) | undefined
}

/**
 * Every (strategy, item) pair: the result of an earlier pass when it answered with the same fingerprint
 * (rescored from its `final.md` if the scorer or the answer changed since), else a new run. Returns the
 * results of every pair, in strategy then dataset order, with the final progress.
 */
export const runEval = Effect.fn("runEval")(function*(options: EvalOptions) {
  const fs = yield* FileSystem.FileSystem
  const settings = yield* Settings
  const previousText = yield* fs.exists(options.output).pipe(
    Effect.flatMap((exists) => (exists ? fs.readFileString(options.output) : Effect.succeed(""))),
    Effect.mapError((e) => new UsageError({ message: `cannot read the results file ${options.output}: ${plainFsReason(e)}` }))
  )
  const previous = lastResults(previousText)

  const judges = Option.getOrElse(settings.judges, () => settings.models)
  const pairs = options.strategies.flatMap((strategy) =>
    options.items.map((item) => {
      const fingerprint = fingerprintOf({
        strategy,
        question: item.question,
        candidates: item.candidates ?? null,
        models: item.candidates === undefined ? settings.models : null,
        synthesizer: settings.synthesizer,
        // What else a strategy's answer depends on: who judges, refines or is sampled, and how often.
        ...(strategy === "rank" ? { judges } : {}),
        ...(strategy === "refine" ? { refiners: settings.models, rounds: settings.rounds } : {}),
        ...(strategy === "self" ? { sampled: settings.models[0], samples: settings.samples } : {})
      })
      return {
        strategy,
        item,
        base: { strategy, id: item.id, line: item.line, fingerprint, scorer: options.scorer.name, answer: item.answer }
      }
    })
  )
  const reused = new Map<string, EvalResult>()
  for (const pair of pairs) {
    const before = previous.get(keyOf(pair.strategy, pair.item.id))
    if (before === undefined || before.fingerprint !== pair.base.fingerprint) continue
    if (before.status !== "ok" && before.status !== "partial") continue
    const rescored = yield* rescore(before, pair.base.scorer, pair.item.answer, options.scorer)
    if (rescored !== undefined) reused.set(keyOf(pair.strategy, pair.item.id), rescored)
  }
  const todo = pairs.filter((pair) => !reused.has(keyOf(pair.strategy, pair.item.id)))
  // Once for the whole eval rather than once per item.
  const refused = options.strategies.includes("self") ? tooManySamples(settings.samples, settings.maxModels) : undefined
  if (refused !== undefined) return yield* new UsageError({ message: refused.message })
  // --check-models once for the whole eval, not once per run: the synthesizers, and the candidates if any are asked.
  if (settings.checkModels && todo.length > 0) {
    yield* checkRunRequest({
      prompt: "",
      models: todo.some((pair) => pair.item.candidates === undefined || pair.strategy !== "synthesize") ? settings.models : [],
      synthesizers: [settings.synthesizer, ...settings.fallbackSynthesizers],
      readers: todo.some((pair) => pair.strategy === "rank") ? judges : []
    })
  }

  // Before the results file is opened: the runs made since it was, for the pairs without a result line.
  const onDisk = yield* evalRunsOnDisk(options.output, todo, settings, judges)
  const { appendLine } = yield* openResultsFile(options.output, previousText)

  const fresh = yield* Ref.make(new Map<string, EvalResult>())
  const startedMs = yield* Clock.currentTimeMillis
  const progress = yield* Ref.make<EvalProgress>({
    total: todo.length,
    ok: 0,
    partial: 0,
    failed: 0,
    cancelled: 0,
    skipped: pairs.length - todo.length,
    invalid: 0,
    inFlight: 0,
    cost: 0,
    unknownCost: 0,
    elapsedMs: 0,
    correct: [...reused.values()].filter((r) => r.correct).length
  })
  const report = (last: EvalResult | undefined) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const p = yield* Ref.updateAndGet(progress, (p) => ({ ...p, elapsedMs: now - startedMs }))
      if (options.onProgress) yield* options.onProgress(p, last)
    })
  const record = (result: EvalResult) =>
    appendLine(result).pipe(
      Effect.zipRight(Ref.update(fresh, (all) => new Map(all).set(keyOf(result.strategy, result.id), result))),
      Effect.zipRight(Ref.update(progress, (p) => ({
        ...p,
        [result.status]: p[result.status] + 1,
        inFlight: p.inFlight - 1,
        cost: roundUsd(p.cost + (result.cost ?? 0)),
        unknownCost: p.unknownCost + (result.cost === null && result.runDir !== null ? 1 : 0),
        correct: p.correct + (result.correct ? 1 : 0)
      }))),
      Effect.zipRight(report(result))
    )

  if (todo.some((pair) => pair.strategy === "self" && pair.item.candidates !== undefined)) {
    yield* Effect.logWarning(
      `eval: self does not use the frozen candidates: it asks ${settings.models[0]} ${settings.samples} times per question, and pays for it`
    )
  }
  yield* Effect.logInfo(
    `eval: ${todo.length} run${todo.length === 1 ? "" : "s"} to make` +
      `${reused.size > 0 ? `, ${reused.size} already done` : ""}; results in ${options.output}`
  )
  if (onDisk.size > 0) {
    const interrupted = [...onDisk.values()].filter((run) => run._tag === "Interrupted").length
    yield* Effect.logInfo(
      `eval: ${onDisk.size - interrupted} run${onDisk.size - interrupted === 1 ? "" : "s"} answered on disk (recorded, not asked again), ` +
        `${interrupted} interrupted run${interrupted === 1 ? "" : "s"} to synthesize again from the answers on disk`
    )
  }
  yield* report(undefined)

  const recordAnswered = (pair: (typeof pairs)[number], run: RunResult) =>
    Ref.update(progress, (p) => ({ ...p, inFlight: p.inFlight + 1 })).pipe(
      Effect.zipRight(record(resultOf(pair.base, run, options.scorer)))
    )
  const runOne = (pair: (typeof pairs)[number], interrupted: string | undefined) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const startedDir = yield* Ref.make<string | null>(null)
        const onEvent = (event: RunEvent) => (event._tag === "RunStarted" ? Ref.set(startedDir, event.run.dir) : Effect.void)
        // The process-wide gate bounds the calls: a run's own fan-out (or its judges) does not hold its calls back.
        const calls = Math.max(1, settings.models.length, judges.length, asksCandidates(pair.strategy, pair.item) ? settings.samples : 0)
        // The pair's strategy as the setting too: a re-synthesis takes its strategy from it.
        const runSettings = { ...settings, strategy: pair.strategy, concurrency: calls, checkModels: false }
        yield* Ref.update(progress, (p) => ({ ...p, inFlight: p.inFlight + 1 }))
        const run = interrupted !== undefined
          ? resynthesize({ runId: interrupted, onEvent })
          : runStrategy(pair.strategy, pair.item, settings.models, onEvent)
        const exit = yield* restore(run.pipe(Effect.provideService(Settings, runSettings))).pipe(Effect.exit)
        const result: EvalResult = Exit.isSuccess(exit)
          ? resultOf(pair.base, exit.value, options.scorer)
          : {
            ...pair.base,
            runDir: yield* Ref.get(startedDir),
            status: Exit.isInterrupted(exit) ? "cancelled" : "failed",
            correct: false,
            cost: null,
            promptTokens: null,
            completionTokens: null,
            durationMs: null,
            error: Exit.isInterrupted(exit) ? "interrupted" : failureText(exit.cause)
          }
        if (result.status === "failed") yield* Effect.logWarning(`${pair.strategy} ${pair.item.id}: ${result.error ?? "no answer"}`)
        // Recorded even when the eval is being interrupted: that interruption then goes on stopping it.
        yield* record(result)
      })
    )

  yield* Effect.forEach(todo, (pair) => {
    const found = onDisk.get(keyOf(pair.strategy, pair.item.id))
    return found?._tag === "Answered" ? recordAnswered(pair, found.run) : runOne(pair, found?.runId)
  }, { concurrency: options.runs, discard: true })
  const made = yield* Ref.get(fresh)
  const results = pairs.flatMap((pair) => {
    const key = keyOf(pair.strategy, pair.item.id)
    const result = made.get(key) ?? reused.get(key)
    return result === undefined ? [] : [result]
  })
  return { results, progress: yield* Ref.get(progress) }
}, Effect.scoped)
