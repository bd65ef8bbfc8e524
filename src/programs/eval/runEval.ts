import { Effect, Exit, Ref } from "effect"
import { UsageError } from "../../domain/errors.js"
import { plural } from "../../domain/format.js"
import { readTextSafely, USER_FILE_READ } from "../../domain/safeFile.js"
import { Settings } from "../../services/settings.js"
import type { SettingsValue } from "../../settings/values.js"
import { openResultsFile } from "../batchResults.js"
import { checkRunRequest } from "../checkRunRequest.js"
import { type BatchProgress, makeProgressRecorder, progressAtStart, type ProgressRecorder } from "../progressRecorder.js"
import { resynthesize } from "../resynthesize.js"
import type { RunEvent } from "../run/request.js"

import { registry, type StrategyName } from "../strategies/registry.js"

import type { EvalItem } from "./dataset.js"
import { type EvalPair, pairsOf, reuseEarlier, soloPairsOf, staleRuns } from "./evalPairs.js"
import { type EvalResult, failureText, keyOf, lastResults, resultOf } from "./evalResults.js"
import { type EvalFound, evalRunsOnDisk } from "./evalResume.js"
import type { Scorer } from "./scorers.js"
import { runSolo, SOLO } from "./solo.js"
import { asksCandidates, evalPlan, runStrategy } from "./strategies.js"

// Runs every selected item through every strategy, a few runs at a time, and appends one result line per
// run to the results file the moment it ends, so that a second pass pays nothing for what is done.

export type EvalProgress = BatchProgress & { readonly correct: number }

export interface EvalOptions {
  readonly items: ReadonlyArray<EvalItem>
  readonly strategies: ReadonlyArray<StrategyName>
  readonly scorer: Scorer
  readonly output: string
  /** Runs in flight at once. */
  readonly runs: number
  /** Also ask the synthesizer alone each question (the synthesizer-alone baseline: solo.ts). */
  readonly solo?: boolean | undefined
  readonly onProgress?: ((progress: EvalProgress, last: EvalResult | undefined) => Effect.Effect<void>) | undefined
}

/**
 * Every (strategy, item) pair: the result of an earlier pass when it answered with the same fingerprint
 * (rescored from its `final.md` if the scorer or the answer changed since), else the run an earlier pass left
 * on disk (see evalResume.ts), else a new run. Returns the results of every pair, in strategy then dataset
 * order, with the final progress.
 */
export const runEval = Effect.fn("runEval")(function*(options: EvalOptions) {
  const settings = yield* Settings
  const previousText = yield* readTextSafely(options.output, USER_FILE_READ).pipe(
    Effect.catchIf((e) => e.reason === "missing", () => Effect.succeed("")),
    Effect.mapError((e) => new UsageError({ message: `cannot read the results file ${e.message}` }))
  )
  const pairs = [
    ...pairsOf(options.items, options.strategies, options.scorer, settings),
    ...(options.solo === true ? soloPairsOf(options.items, options.scorer, settings) : [])
  ]
  const previous = lastResults(previousText)
  const reused = yield* reuseEarlier(pairs, previous, options.scorer)
  const todo = pairs.filter((pair) => !reused.has(keyOf(pair.strategy, pair.item.id)))
  yield* checkOnce(options.strategies, todo, settings)
  // Before the results file is opened: the runs made since it was, for the pairs without a result line.
  // A synthesizer-alone run left on disk without its line is asked again (its result line is its record).
  const onDisk = yield* evalRunsOnDisk(options.output, todo.filter(isStrategyPair), settings, staleRuns(pairs, previous))
  const { appendLine } = yield* openResultsFile(options.output, previousText)
  // The results of this pass, by pair, kept as their lines are written (one map added to, not a copy per result:
  // a dataset's thousands of pairs made that quadratic).
  const fresh = new Map<string, EvalResult>()
  const recorder = yield* makeProgressRecorder({
    start: {
      ...progressAtStart({ total: todo.length, skipped: pairs.length - todo.length }),
      correct: [...reused.values()].filter((r) => r.correct).length
    },
    appendLine: (result: EvalResult) =>
      appendLine(result).pipe(Effect.zipRight(Effect.sync(() => fresh.set(keyOf(result.strategy, result.id), result)))),
    tally: tallyCorrect,
    onProgress: options.onProgress
  })
  yield* announce(options.output, todo, reused.size, onDisk, settings)
  yield* recorder.report(undefined)

  const runOne = runPair(settings, options.scorer, recorder)
  yield* Effect.forEach(todo, (pair) => {
    const found = onDisk.get(keyOf(pair.strategy, pair.item.id))
    // A run an earlier pass finished without recording it: recorded, no call made.
    return found?._tag === "Answered" ? recorder.record(resultOf(pair.base, found.run, options.scorer)) : runOne(pair, found?.runId)
  }, { concurrency: options.runs, discard: true })
  const results = pairs.flatMap((pair) => {
    const key = keyOf(pair.strategy, pair.item.id)
    const result = fresh.get(key) ?? reused.get(key)
    return result === undefined ? [] : [result]
  })
  return { results, progress: yield* Ref.get(recorder.progress) }
}, Effect.scoped)

/** What is refused or checked once for the whole eval rather than once per run. */
const checkOnce = Effect.fnUntraced(function*(
  strategies: ReadonlyArray<StrategyName>,
  todo: ReadonlyArray<EvalPair>,
  settings: SettingsValue
) {
  const refused = strategies.map((name) => registry[name].refusal(evalPlan(name, settings), settings)).find((r) => r !== undefined)
  if (refused !== undefined) return yield* new UsageError({ message: refused })
  // --check-models: the synthesizers, and the candidates if any are asked.
  if (settings.checkModels && todo.length > 0) {
    yield* checkRunRequest({
      prompt: "",
      models: todo.some((pair) => pair.item.candidates === undefined || pair.strategy !== "synthesize") ? settings.models : [],
      synthesizers: [settings.synthesizer, ...settings.fallbackSynthesizers],
      readers: [...new Set(todo.filter(isStrategyPair).flatMap((pair) => evalPlan(pair.strategy, settings).steps.models))]
    })
  }
})

/** The eval's first log lines: what it will pay for, and what it takes from disk instead. */
const announce = Effect.fnUntraced(function*(
  output: string,
  todo: ReadonlyArray<EvalPair>,
  reused: number,
  onDisk: ReadonlyMap<string, EvalFound>,
  settings: SettingsValue
) {
  // A strategy that samples one model asks it even where the candidates are frozen.
  for (
    const name of new Set(todo.filter((pair) => pair.item.candidates !== undefined).filter(isStrategyPair).map((pair) => pair.strategy))
  ) {
    const { candidates } = evalPlan(name, settings)
    const asks = `${candidates[0]} ${candidates.length} times per question`
    if (registry[name].samples) {
      yield* Effect.logWarning(`eval: ${name} does not use the frozen candidates: it asks ${asks}, and pays for it`)
    }
  }
  yield* Effect.logInfo(`eval: ${plural(todo.length, "run")} to make${reused > 0 ? `, ${reused} already done` : ""}; results in ${output}`)
  if (onDisk.size > 0) {
    const interrupted = [...onDisk.values()].filter((run) => run._tag === "Interrupted").length
    yield* Effect.logInfo(
      `eval: ${plural(onDisk.size - interrupted, "run")} answered on disk (recorded, not asked again), ` +
        `${plural(interrupted, "interrupted run")} to synthesize again from the answers on disk`
    )
  }
})

type Recorder = ProgressRecorder<EvalProgress, EvalResult>

const tallyCorrect = (p: EvalProgress, result: EvalResult): EvalProgress => result.correct ? { ...p, correct: p.correct + 1 } : p

/** Whether a pair runs a strategy (not the synthesizer-alone baseline). */
const isStrategyPair = (pair: EvalPair): pair is EvalPair & { readonly strategy: StrategyName } => pair.strategy !== SOLO

/** A strategy's run of a pair (or the re-synthesis of its interrupted run), under the pair's settings. */
const strategyRun = (
  settings: SettingsValue,
  pair: EvalPair & { readonly strategy: StrategyName },
  interrupted: string | undefined,
  onEvent: (event: RunEvent) => Effect.Effect<void>
) => {
  // The process-wide gate bounds the calls: a run's own fan-out (or its judges) does not hold its calls back.
  const { candidates, steps } = evalPlan(pair.strategy, settings)
  const asked = asksCandidates(pair.strategy, pair.item) ? candidates.length : 0
  const calls = Math.max(1, settings.models.length, steps.models.length, asked)
  // The pair's strategy as the setting too: a re-synthesis takes its strategy from it.
  const runSettings = { ...settings, strategy: pair.strategy, concurrency: calls, checkModels: false }
  const run = interrupted !== undefined
    ? resynthesize({ runId: interrupted, onEvent })
    : runStrategy(pair.strategy, pair.item, settings.models, onEvent)
  return run.pipe(Effect.provideService(Settings, Settings.make(runSettings)))
}

/** One pair's run (or the re-synthesis of its interrupted run), recorded however it ends. */
const runPair = (settings: SettingsValue, scorer: Scorer, recorder: Recorder) => (pair: EvalPair, interrupted: string | undefined) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const startedDir = yield* Ref.make<string | null>(null)
      const onEvent = (event: RunEvent) => (event._tag === "RunStarted" ? Ref.set(startedDir, event.run.dir) : Effect.void)
      yield* recorder.started
      const run = isStrategyPair(pair) ? strategyRun(settings, pair, interrupted, onEvent) : runSolo(pair.item.question, onEvent)
      const exit = yield* restore(run).pipe(Effect.exit)
      const result: EvalResult = Exit.isSuccess(exit)
        ? resultOf(pair.base, exit.value, scorer)
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
      yield* recorder.ended(result)
    })
  )
