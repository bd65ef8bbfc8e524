import { formatCount, formatUsd, roundUsd } from "../../domain/format.js"
import { stripControl } from "../../domain/text.js"
import { strategyNamed } from "../strategies/registry.js"
import type { Baselines, perItemBaselines } from "./baselines.js"
import type { EvalResult } from "./evalResults.js"
import { type Accuracy, accuracyOf, mean, median, type Paired, pairedOf } from "./stats.js"

// The eval's report: one row per baseline and per strategy, as JSON and as a Markdown table.

export interface StrategyRow extends Accuracy {
  readonly strategy: string
  /** Items with a result (the rest were not run, or were interrupted before their run started). */
  readonly runs: { readonly ok: number; readonly partial: number; readonly failed: number; readonly cancelled: number }
  /** USD, summed over the runs that reported a cost. */
  readonly cost: number
  /** Runs whose provider reported no cost: `cost` leaves them out, and the table says so. */
  readonly unknownCost: number
  /** USD per correct answer; null when none is correct or some run's cost is unknown. */
  readonly costPerCorrect: number | null
  readonly tokens: { readonly prompt: number; readonly completion: number }
  /** Runs some of whose tokens are unknown (a call that reported none): `tokens` leaves them out, the table says so. */
  readonly unknownTokens?: number | undefined
  /** Runs some of whose tokens are estimates (a call billed without usage): in `tokens`, marked in the table. */
  readonly estimatedTokens?: number | undefined
  readonly latencyMs: { readonly mean: number | null; readonly median: number | null }
  /** What the strategy's own step did over its runs (rank: rankings counted of the judges asked; refine: rounds answered). */
  readonly steps?: { readonly done: number; readonly of: number } | undefined
  /** Runs in which the strategy fell back to a plain synthesis: the row is then not only the strategy's. */
  readonly degraded?: number | undefined
}

export interface EvalReport {
  readonly dataset: string
  readonly scorer: string
  /** Items evaluated (after --sample / --limit). */
  readonly items: number
  readonly synthesizer?: string | undefined
  readonly baselines: Baselines | null
  /** Some items' candidates were asked (no frozen answers): their baselines are read off the answers they gave. */
  readonly candidatesAsked?: boolean | undefined
  readonly strategies: ReadonlyArray<StrategyRow>
  /** Each strategy against the baselines on the same items (absent without frozen candidates or strategies). */
  readonly paired?: ReadonlyArray<PairedRow> | undefined
  readonly resultsFile?: string | undefined
}

/** A strategy against the best single system and the vote, item by item over the items with candidates' answers. */
export interface PairedRow {
  readonly strategy: string
  readonly items: number
  /**
   * Against the best single-model row: the best single candidate, or the synthesizer alone when it was asked and
   * right more often on these items (`model` names it: "synthesizer-alone (MODEL)" then).
   */
  readonly bestSingle: Paired & { readonly model: string }
  /** Against the vote; absent when no candidate gave answers (the synthesizer alone is then the only baseline). */
  readonly majority?: Paired | undefined
  /** Against the synthesizer alone, when it was asked (`--baselines solo`). */
  readonly solo?: Paired | undefined
}

/** The synthesizer-alone runs' verdicts by item id, when they ran. */
export const soloVerdicts = (results: ReadonlyArray<EvalResult>, solo: string): ReadonlyMap<string, boolean> | undefined => {
  const mine = results.filter((r) => r.strategy === solo)
  return mine.length === 0 ? undefined : new Map(mine.map((r) => [r.id, r.correct]))
}

/**
 * The paired rows; an item without a result counts as wrong, as in the strategy rows. Over the items with
 * candidates' answers; without any, against the synthesizer alone over every item it was asked.
 */
export const pairedRows = (
  strategies: ReadonlyArray<string>,
  results: ReadonlyArray<EvalResult>,
  baselines: ReturnType<typeof perItemBaselines>,
  solo?: { readonly name: string; readonly verdicts: ReadonlyMap<string, boolean> } | undefined
): ReadonlyArray<PairedRow> | undefined => {
  if (strategies.length === 0 || (baselines === undefined && solo === undefined)) return undefined
  const ids = baselines?.items.map((item) => item.id) ?? [...(solo?.verdicts.keys() ?? [])]
  const soloRight = (id: string) => solo?.verdicts.get(id) === true
  const candidateRight = new Map(baselines?.items.map((item) => [item.id, item.bestSingle]) ?? [])
  const voteRight = new Map(baselines?.items.map((item) => [item.id, item.majority]) ?? [])
  // The best single-model row on these items: the best candidate, unless the synthesizer alone beat it.
  const soloCount = ids.filter(soloRight).length
  const candidateCount = ids.filter((id) => candidateRight.get(id) === true).length
  const soloIsBest = solo !== undefined && (baselines === undefined || soloCount > candidateCount)
  const best = soloIsBest ? soloRight : (id: string) => candidateRight.get(id) === true
  return strategies.map((strategy) => {
    const right = new Set(results.filter((r) => r.strategy === strategy && r.correct).map((r) => r.id))
    const against = (baseline: (id: string) => boolean) => pairedOf(ids.map((id) => [right.has(id), baseline(id)] as const))
    return {
      strategy,
      items: ids.length,
      bestSingle: { model: soloIsBest ? solo.name : baselines?.bestSingle ?? "", ...against(best) },
      ...(baselines !== undefined ? { majority: against((id) => voteRight.get(id) === true) } : {}),
      ...(solo !== undefined ? { solo: against(soloRight) } : {})
    }
  })
}

/** One row per strategy, over the items of the run (an item without a result counts as wrong). */
export const strategyRows = (
  strategies: ReadonlyArray<string>,
  results: ReadonlyArray<EvalResult>,
  items: number
): ReadonlyArray<StrategyRow> =>
  strategies.map((strategy) => {
    const mine = results.filter((r) => r.strategy === strategy)
    const count = (status: EvalResult["status"]) => mine.filter((r) => r.status === status).length
    const durations = mine.flatMap((r) => (r.durationMs === null || r.status === "cancelled" ? [] : [r.durationMs]))
    const correct = mine.filter((r) => r.correct).length
    const cost = roundUsd(mine.reduce((sum, r) => sum + (r.cost ?? 0), 0))
    // A run with an estimated call has a cost that leaves that call out: unknown in part.
    const unknownCost = mine.filter((r) => r.runDir !== null && (r.cost === null || (r.estimatedCalls ?? 0) > 0)).length
    return {
      strategy,
      ...accuracyOf(correct, items),
      runs: { ok: count("ok"), partial: count("partial"), failed: count("failed"), cancelled: count("cancelled") },
      cost,
      unknownCost,
      costPerCorrect: correct === 0 || unknownCost > 0 ? null : cost / correct,
      tokens: {
        prompt: mine.reduce((sum, r) => sum + (r.promptTokens ?? 0), 0),
        completion: mine.reduce((sum, r) => sum + (r.completionTokens ?? 0), 0)
      },
      unknownTokens: mine.filter((r) => r.runDir !== null && (r.promptTokens === null || (r.unreportedCalls ?? 0) > 0)).length,
      estimatedTokens: mine.filter((r) => (r.estimatedCalls ?? 0) > 0).length,
      latencyMs: { mean: mean(durations) ?? null, median: median(durations) ?? null },
      ...stepsOf(mine),
      degraded: mine.filter((r) => r.degraded !== undefined).length
    }
  })

/** The step counts added up over the runs that recorded them. */
const stepsOf = (results: ReadonlyArray<EvalResult>): Pick<StrategyRow, "steps"> => {
  const counted = results.flatMap((r) => (r.steps === undefined ? [] : [r.steps]))
  if (counted.length === 0) return {}
  return { steps: { done: counted.reduce((n, s) => n + s.done, 0), of: counted.reduce((n, s) => n + s.of, 0) } }
}

/** "rank: 0/42 rankings counted, degraded in 14 runs": what the strategy really did, beside its name. */
const whatHappened = (s: StrategyRow): string => {
  const unit = strategyNamed(s.strategy)?.stepUnit ?? "steps"
  const steps = s.steps === undefined ? "" : `, ${s.strategy}: ${s.steps.done}/${s.steps.of} ${unit}`
  const degraded = (s.degraded ?? 0) > 0
    ? `, **degraded** in ${s.degraded} run${s.degraded === 1 ? "" : "s"} (fell back to synthesize)`
    : ""
  return `${steps}${degraded}`
}

const percent = (x: number) => `${(x * 100).toFixed(1)} %`
const seconds = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)} s`)

/** Cells of one row: accuracy, interval, correct/n, cost, cost per correct answer, tokens, latency. */
const cells = (a: Accuracy, cost: string, perCorrect: string, tokens: string, latency: string) => [
  percent(a.accuracy),
  `${(a.interval[0] * 100).toFixed(1)}–${(a.interval[1] * 100).toFixed(1)} %`,
  `${a.correct}/${a.n}`,
  cost,
  perCorrect,
  tokens,
  latency
]

/** A cost the provider did not report is said to be unknown, never counted as $0 (as `batch` says it). */
const costText = (s: StrategyRow): string => {
  if (s.unknownCost === 0) return formatUsd(s.cost)
  const ran = s.runs.ok + s.runs.partial + s.runs.failed + s.runs.cancelled
  return ran > s.unknownCost ? `${formatUsd(s.cost)} + unknown` : "unknown"
}

/** Tokens, never an unknown counted as 0: "1,234 (estimated in part) + unknown", or "unknown". */
const tokensText = (s: StrategyRow): string => {
  const total = s.tokens.prompt + s.tokens.completion
  const ran = s.runs.ok + s.runs.partial + s.runs.failed + s.runs.cancelled
  if (total === 0 && (s.unknownTokens ?? 0) > 0 && (s.unknownTokens ?? 0) >= ran) return "unknown"
  return `${formatCount(total)}${(s.estimatedTokens ?? 0) > 0 ? " (estimated in part)" : ""}` +
    `${(s.unknownTokens ?? 0) > 0 ? " + unknown" : ""}`
}

/** Model and dataset names come from files: nothing in them may break the table or reach a terminal raw. */
const cell = (text: string) => stripControl(text).replace(/\s+/g, " ").replace(/\|/g, "\\|")

export const markdownReport = (report: EvalReport): string => {
  const rows: Array<ReadonlyArray<string>> = []
  // Frozen answers cost nothing; asked ones were paid for in the strategies' runs (counted there, not twice).
  const free: readonly [string, string, string, string] = report.candidatesAsked === true
    ? ["—", "—", "—", "—"]
    : ["$0", "$0", "0", "—"]
  if (report.baselines) {
    const b = report.baselines
    rows.push([`best single (${cell(b.bestSingle.model)})`, ...cells(b.bestSingle, ...free)])
    rows.push(["majority vote (tie → best single's answer)", ...cells(b.majority, ...free)])
    rows.push(["majority vote (tie → first in line)", ...cells(b.majorityFirstInLine, ...free)])
    rows.push(["oracle (any candidate right)", ...cells(b.oracle, ...free)])
  }
  for (const s of report.strategies) {
    const failed = s.runs.failed + s.runs.cancelled
    rows.push([
      `${cell(s.strategy)}${report.synthesizer !== undefined ? ` (${cell(report.synthesizer)})` : ""}${
        failed > 0 ? `, ${failed} without answer` : ""
      }${whatHappened(s)}`,
      ...cells(
        s,
        costText(s),
        s.costPerCorrect === null ? "—" : formatUsd(s.costPerCorrect),
        tokensText(s),
        seconds(s.latencyMs.mean)
      )
    ])
  }
  const header = ["", "accuracy", "95 % interval (Wilson)", "correct", "cost", "cost / correct", "tokens", "latency (mean)"]
  const lines = [
    `**${cell(report.dataset)}** · ${report.items} item${report.items === 1 ? "" : "s"} · scorer ${report.scorer}`,
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ]
  if (report.baselines) {
    lines.push(
      "",
      `Candidates alone: ${report.baselines.candidates.map((c) => `${cell(c.model)} ${percent(c.accuracy)}`).join(", ")}` +
        `${
          report.baselines.items < report.items ? ` (baselines over the ${report.baselines.items} items with ${answersOf(report)})` : ""
        }.`,
      `Tied votes: ${report.baselines.tied} of ${report.baselines.items} items (there the tie policy decides the vote).`
    )
  }
  if (report.candidatesAsked === true && report.baselines) {
    lines.push(
      "The baselines are read off the answers the candidates gave when asked (each item's first run that asked them): " +
        "paid for once, in the strategies' cost."
    )
  }
  if (report.paired !== undefined) lines.push(...pairedTable(report.paired, answersOf(report)))
  return `${lines.join("\n")}\n`
}

/** Four decimals, or a power of ten below 0.001. */
const pValue = (p: number) => (p >= 0.001 ? p.toFixed(4).replace(/0+$/, "").replace(/\.$/, "") : p.toExponential(1))
const wlt = (x: Paired) => `${x.wins}/${x.losses}/${x.ties}`

/** Where the candidates' answers of the baselines come from. */
const answersOf = (report: EvalReport) => (report.candidatesAsked === true ? "candidates' answers" : "frozen candidates")

const pairedTable = (paired: ReadonlyArray<PairedRow>, answers: string): ReadonlyArray<string> => {
  const first = paired[0]
  if (first === undefined) return []
  const solo = first.solo !== undefined
  const header = [
    "paired",
    `vs best single (${cell(first.bestSingle.model)}) W/L/T`,
    "p",
    "vs majority vote W/L/T",
    "p",
    ...(solo ? ["vs synthesizer alone W/L/T", "p"] : [])
  ]
  return [
    "",
    `Paired, on the ${first.items} items with ${
      first.majority !== undefined ? answers : "an answer of the synthesizer alone"
    }: W = the strategy right and the baseline wrong, ` +
    "L = the reverse, T = both right or both wrong; p = exact two-sided McNemar test" +
    (solo ? "; best single = the better of the best candidate and the synthesizer alone on these items." : "."),
    "",
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...paired.map((row) =>
      `| ${cell(row.strategy)} | ${wlt(row.bestSingle)} | ${pValue(row.bestSingle.p)} | ` +
      `${row.majority !== undefined ? `${wlt(row.majority)} | ${pValue(row.majority.p)}` : "— | —"} |` +
      (row.solo !== undefined ? ` ${wlt(row.solo)} | ${pValue(row.solo.p)} |` : "")
    )
  ]
}
