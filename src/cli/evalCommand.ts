import { Effect, Either, Option, ParseResult, Schedule, Schema } from "effect"
import * as path from "node:path"
import { UsageError } from "../domain/errors.js"
import { formatUsd } from "../domain/format.js"
import { stripControl } from "../domain/text.js"
import { holdResultsLock, isSameFile } from "../programs/batchLock.js"
import { withAskedAnswers } from "../programs/eval/askedAnswers.js"
import { computeBaselines, perItemBaselines } from "../programs/eval/baselines.js"
import { builtinDatasets } from "../programs/eval/builtinDatasets.js"
import { type EvalItem, loadDataset, selectItems } from "../programs/eval/dataset.js"
import { defaultEvalResultsPath, type EvalResult } from "../programs/eval/evalResults.js"
import { writePlot } from "../programs/eval/plot.js"
import { type EvalReport, markdownReport, pairedRows, soloVerdicts, strategyRows } from "../programs/eval/report.js"
import { type EvalOptions, type EvalProgress, runEval } from "../programs/eval/runEval.js"
import { type Scorer, scorers } from "../programs/eval/scorers.js"
import { SOLO } from "../programs/eval/solo.js"
import { StrategyList } from "../programs/eval/strategies.js"
import type { StrategyName } from "../programs/strategies/registry.js"
import { Logging } from "../services/logging.js"
import { ProcessIo } from "../services/processIo.js"
import { Settings } from "../services/settings.js"
import { withoutSpansUnlessExported } from "../services/tracing.js"
import { BATCH_DEFAULTS } from "./batchCli.js"
import { makeProgressView, progressText, type ProgressWords } from "./batchProgress.js"
import type { evalCli } from "./evalCli.js"
import type { ParsedArgs } from "./flags.js"
import { outcomeIf, succeeded } from "./outcome.js"
import { writeStdout } from "./output.js"
import { settingsLayer } from "./settingsOptions.js"

const Count = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "must be a whole number of at least 1" }))

/** A flag's value decoded with its schema; a bad one is a one-line usage error naming the flag. */
const decodeFlag = <A, I>(flag: string, schema: Schema.Schema<A, I>, value: I) =>
  Either.mapLeft(
    Schema.decodeEither(schema)(value),
    (e) => new UsageError({ message: `${flag}: ${ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => i.message).join("; ")}` })
  )

const optionalCount = (flag: string, value: Option.Option<number>) =>
  Option.match(value, { onNone: () => Either.right(undefined), onSome: (n) => decodeFlag(flag, Count, n) })

/** Text from the dataset or a provider, on one line and without control characters. */
const oneLine = (text: string) => stripControl(text).replace(/\s+/g, " ")

const resultText = (r: EvalResult): string =>
  oneLine(
    `${r.strategy} ${r.id} (line ${r.line}) ${r.status}${r.correct ? " ✓" : " ✗"}${r.cost !== null ? ` ${formatUsd(r.cost)}` : ""}` +
      `${r.error !== undefined ? `: ${r.error}` : ""}`
  )

const statusText = (p: EvalProgress) => `parallel-llm eval: ${progressText(p)} · ${p.correct} correct`

const evalWords: ProgressWords<EvalProgress, EvalResult> = {
  status: statusText,
  trouble: (r) => `  ✗ ${resultText(r)}\n`,
  ended: (p, r) => `${statusText(p)} · ${resultText(r)}\n`
}

type EvalArgs = ParsedArgs<typeof evalCli>

/** eval's settings: batch's defaults (a process-wide --concurrency); `--baselines-only` makes no call, so needs no key. */
export const evalSettings = (args: EvalArgs) =>
  settingsLayer(args.settings, { defaults: BATCH_DEFAULTS, requireApiKey: !baselinesOnlyFree(args) })

/** `--baselines-only` without the paid baseline: no call at all. */
const baselinesOnlyFree = (args: EvalArgs): boolean => args.baselinesOnly && Option.getOrUndefined(args.baselines) !== "solo"

/** The dataset named and the flags checked before anything is read: a bad one is a usage error naming it. */
const decodeEvalArgs = Effect.fnUntraced(function*(args: EvalArgs) {
  if (Option.isSome(args.file) && Option.isSome(args.dataset)) {
    return yield* new UsageError({ message: "give the dataset as FILE.jsonl or with --dataset, not both" })
  }
  const spec = Option.orElse(args.file, () => args.dataset)
  if (Option.isNone(spec)) {
    return yield* new UsageError({ message: `no dataset: give FILE.jsonl or --dataset ${Object.keys(builtinDatasets).join("|")}` })
  }
  return {
    spec: spec.value,
    strategies: yield* decodeFlag("--strategies", StrategyList, args.strategies),
    limit: yield* optionalCount("--limit", args.limit),
    sample: yield* optionalCount("--sample", args.sample),
    runs: yield* decodeFlag("--runs", Count.pipe(Schema.lessThanOrEqualTo(1024, { message: () => "must be at most 1024" })), args.runs)
  }
})

/** `eval`: exit code 1 when a run failed or was cancelled. Needs the CallGate of `batchLayer`. */
export const evaluate = Effect.fn("eval")(function*(args: EvalArgs) {
  const { spec, strategies, limit, sample, runs } = yield* decodeEvalArgs(args)
  // `--sample` draws from every item; `--limit` alone needs only the first ones decoded.
  const dataset = yield* loadDataset(spec, Option.getOrUndefined(args.scorer), sample === undefined ? limit : undefined)
  const scorer = scorers[Option.getOrElse(args.scorer, () => dataset.defaultScorer)]
  const items = selectItems(dataset.items, { limit, sample, seed: args.seed })
  const baselines = computeBaselines(items, scorer)
  const report = (rest: Partial<EvalReport>): EvalReport => ({
    dataset: dataset.name,
    scorer: scorer.name,
    items: items.length,
    baselines: baselines ?? null,
    strategies: [],
    ...rest
  })
  const plotFile = Option.map(args.plot, (file) => path.resolve(file))
  // The chart after the report: a plot that cannot be written fails the command, the report is printed all the same.
  const print = (r: EvalReport) =>
    Effect.zipRight(
      writeStdout(args.json ? JSON.stringify(r, null, 2) : markdownReport(r)),
      Option.match(plotFile, { onNone: () => Effect.void, onSome: (file) => writePlot(r, file) })
    )
  if (Option.isSome(plotFile) && (plotFile.value === path.resolve(dataset.file) || (yield* isSameFile(dataset.file, plotFile.value)))) {
    return yield* new UsageError({ message: "--plot must not be the dataset file" })
  }

  if (baselinesOnlyFree(args)) {
    if (baselines === undefined) {
      return yield* new UsageError({ message: `${dataset.name} has no frozen candidates: no baselines to compute without calls` })
    }
    yield* print(report({}))
    return succeeded
  }

  const settings = yield* Settings
  const output = path.resolve(
    Option.getOrElse(
      args.out,
      () => defaultEvalResultsPath(dataset.file, Object.hasOwn(builtinDatasets, dataset.name) ? dataset.name : undefined)
    )
  )
  // A symlink or a hard link to the dataset is the dataset too.
  if (output === path.resolve(dataset.file) || (yield* isSameFile(dataset.file, output))) {
    return yield* new UsageError({ message: "--out must not be the dataset file" })
  }
  if (Option.isSome(plotFile) && (plotFile.value === output || (yield* isSameFile(output, plotFile.value)))) {
    return yield* new UsageError({ message: "--plot must not be the results file" })
  }

  // The synthesizer alone: asked for, or by default when a key is set (not with --baselines-only unless asked).
  const solo = Option.match(args.baselines, {
    onNone: () => !args.baselinesOnly && Option.isSome(settings.apiKey),
    onSome: (b) => b === "solo"
  })
  const measured = args.baselinesOnly ? [] : strategies
  const done = yield* runWithProgress({ items, strategies: measured, scorer, output, runs, solo }, args.waitLock)
  const io = yield* ProcessIo
  io.stderr.write(`parallel-llm: eval done: ${progressText(done.progress)} · ${output}\n`)
  const rows = yield* measuredReport({ items, measured, solo, scorer, results: done.results, synthesizer: settings.synthesizer })
  yield* print(report({ ...rows, resultsFile: output }))
  return outcomeIf(done.progress.failed === 0 && done.progress.cancelled === 0)
})

/** The report's rows once the runs are done: the baselines (the asked candidates' too), strategies, paired test. */
const measuredReport = Effect.fnUntraced(function*(input: {
  readonly items: ReadonlyArray<EvalItem>
  readonly measured: ReadonlyArray<StrategyName>
  readonly solo: boolean
  readonly scorer: Scorer
  readonly results: ReadonlyArray<EvalResult>
  readonly synthesizer: string
}) {
  const { items, measured, results, scorer, synthesizer } = input
  // Candidates that were asked are scored too, read back from the runs: the same baselines as frozen ones.
  const scored = yield* withAskedAnswers(items, measured, results)
  const soloRight = soloVerdicts(results, SOLO)
  return {
    synthesizer,
    baselines: computeBaselines(scored, scorer) ?? null,
    candidatesAsked: items.some((item) => item.candidates === undefined),
    strategies: strategyRows([...measured, ...(input.solo ? [SOLO] : [])], results, items.length),
    paired: pairedRows(
      measured,
      results,
      perItemBaselines(scored, scorer),
      soloRight === undefined ? undefined : { name: `${SOLO} (${synthesizer})`, verdicts: soloRight }
    )
  } satisfies Partial<EvalReport>
})

/** The eval with its progress on stderr (live on a terminal), one process per results file, as in batch. */
const runWithProgress = Effect.fnUntraced(function*(options: Omit<EvalOptions, "onProgress">, waitLock: boolean) {
  const io = yield* ProcessIo
  const view = makeProgressView(io.stderr, evalWords)
  const logging = yield* Logging
  const ticker = view.tty ? Effect.sync(() => view.tick()).pipe(Effect.repeat(Schedule.spaced("1 second"))) : Effect.never
  return yield* Effect.zipRight(
    // The lock is held until the eval ends, taken before the results are read.
    Effect.zipRight(logging.useStderr((line) => view.log(line)), holdResultsLock(options.output, waitLock)),
    runEval({ ...options, onProgress: (p, last) => Effect.sync(() => view.update(p, last)) })
  ).pipe(
    withoutSpansUnlessExported,
    Effect.raceFirst(Effect.andThen(ticker, Effect.never)),
    Effect.ensuring(Effect.sync(() => view.end())),
    Effect.onInterrupt(() =>
      Effect.sync(() =>
        io.stderr.write(`parallel-llm: eval interrupted · results so far in ${options.output}; run the same command again to resume\n`)
      )
    ),
    Effect.scoped
  )
})
