import { formatUsd, roundUsd } from "../../domain/format.js"
import { stripControl } from "../../domain/text.js"
import type { Baselines } from "./baselines.js"
import type { EvalResult } from "./runEval.js"
import { type Accuracy, accuracyOf, mean, median } from "./stats.js"

// The eval's report: one row per baseline and per strategy, as JSON and as a Markdown table.

export interface StrategyRow extends Accuracy {
  readonly strategy: string
  /** Items with a result (the rest were not run, or were interrupted before their run started). */
  readonly runs: { readonly ok: number; readonly partial: number; readonly failed: number; readonly cancelled: number }
  /** USD, summed over the runs that reported a cost. */
  readonly cost: number
  /** Runs whose provider reported no cost: `cost` leaves them out, and the table says so. */
  readonly unknownCost: number
  readonly tokens: { readonly prompt: number; readonly completion: number }
  readonly latencyMs: { readonly mean: number | null; readonly median: number | null }
}

export interface EvalReport {
  readonly dataset: string
  readonly scorer: string
  /** Items evaluated (after --sample / --limit). */
  readonly items: number
  readonly synthesizer?: string | undefined
  readonly baselines: Baselines | null
  readonly strategies: ReadonlyArray<StrategyRow>
  readonly resultsFile?: string | undefined
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
    return {
      strategy,
      ...accuracyOf(mine.filter((r) => r.correct).length, items),
      runs: { ok: count("ok"), partial: count("partial"), failed: count("failed"), cancelled: count("cancelled") },
      cost: roundUsd(mine.reduce((sum, r) => sum + (r.cost ?? 0), 0)),
      unknownCost: mine.filter((r) => r.cost === null && r.runDir !== null).length,
      tokens: {
        prompt: mine.reduce((sum, r) => sum + (r.promptTokens ?? 0), 0),
        completion: mine.reduce((sum, r) => sum + (r.completionTokens ?? 0), 0)
      },
      latencyMs: { mean: mean(durations) ?? null, median: median(durations) ?? null }
    }
  })

const percent = (x: number) => `${(x * 100).toFixed(1)} %`
const seconds = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)} s`)

/** Cells of one row: accuracy, interval, correct/n, cost, tokens, latency. */
const cells = (a: Accuracy, cost: string, tokens: string, latency: string) => [
  percent(a.accuracy),
  `${(a.interval[0] * 100).toFixed(1)}–${(a.interval[1] * 100).toFixed(1)} %`,
  `${a.correct}/${a.n}`,
  cost,
  tokens,
  latency
]

/** A cost the provider did not report is said to be unknown, never counted as $0 (as `batch` says it). */
const costText = (s: StrategyRow): string => {
  if (s.unknownCost === 0) return formatUsd(s.cost)
  const ran = s.runs.ok + s.runs.partial + s.runs.failed + s.runs.cancelled
  return ran > s.unknownCost ? `${formatUsd(s.cost)} + unknown` : "unknown"
}

/** Model and dataset names come from files: nothing in them may break the table or reach a terminal raw. */
const cell = (text: string) => stripControl(text).replace(/\s+/g, " ").replace(/\|/g, "\\|")

export const markdownReport = (report: EvalReport): string => {
  const rows: Array<ReadonlyArray<string>> = []
  const free = ["$0", "0", "—"] as const
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
      }`,
      ...cells(s, costText(s), (s.tokens.prompt + s.tokens.completion).toLocaleString("en-US"), seconds(s.latencyMs.mean))
    ])
  }
  const header = ["", "accuracy", "95 % interval (Wilson)", "correct", "cost", "tokens", "latency (mean)"]
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
        `${report.baselines.items < report.items ? ` (baselines over the ${report.baselines.items} items with frozen candidates)` : ""}.`,
      `Tied votes: ${report.baselines.tied} of ${report.baselines.items} items (there the tie policy decides the vote).`
    )
  }
  return `${lines.join("\n")}\n`
}
