import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { plainFsReason, StoreError } from "../../domain/errors.js"
import { stripControl } from "../../domain/text.js"
import type { EvalReport } from "./report.js"

// `eval --plot FILE.svg`: accuracy against cost, one point per baseline and per strategy, each with its 95 %
// Wilson interval. The chart is described as a Vega-Lite specification and drawn by Vega (plotSvg.ts), which
// escapes every text it writes into the SVG; this module only decides what is drawn.

export interface PlotPoint {
  readonly name: string
  /** "baseline" (read off frozen answers: free) or "strategy" (paid runs). */
  readonly kind: "baseline" | "strategy"
  /** USD per item (0 for a baseline); the part that was reported when some runs' cost is unknown. */
  readonly costPerItem: number
  readonly accuracy: number
  readonly low: number
  readonly high: number
}

/** Names come from files and flags: one line, no control characters (Vega escapes markup itself). */
const label = (text: string) => stripControl(text).replace(/\s+/g, " ")

/** The report's rows as points: the baselines first, then the strategies, in the table's order. */
export const plotPoints = (report: EvalReport): ReadonlyArray<PlotPoint> => {
  const baselines = report.baselines === null ? [] : [
    { name: `best single (${label(report.baselines.bestSingle.model)})`, row: report.baselines.bestSingle },
    { name: "majority vote", row: report.baselines.majority },
    { name: "oracle", row: report.baselines.oracle }
  ]
  return [
    ...baselines.map(({ name, row }): PlotPoint => ({
      name,
      kind: "baseline",
      costPerItem: 0,
      accuracy: row.accuracy,
      low: row.interval[0],
      high: row.interval[1]
    })),
    ...report.strategies.map((s): PlotPoint => ({
      name: `${label(s.strategy)}${s.unknownCost > 0 ? " (cost partly unknown)" : ""}`,
      kind: "strategy",
      costPerItem: report.items === 0 ? 0 : s.cost / report.items,
      accuracy: s.accuracy,
      low: s.interval[0],
      high: s.interval[1]
    }))
  ]
}

/** The cost axis from $0, a little past the dearest point (its label goes to the right); $0.001 when all is free. */
const costAxis = (points: ReadonlyArray<PlotPoint>) => {
  const dearest = Math.max(0, ...points.map((p) => p.costPerItem))
  return {
    field: "costPerItem",
    type: "quantitative",
    title: "cost per item (USD)",
    axis: { format: "$.2~r" },
    scale: { domain: [0, dearest > 0 ? dearest * 1.25 : 0.001] }
  } as const
}
const y = { field: "accuracy", type: "quantitative", title: "accuracy (95 % Wilson interval)" } as const
const colour = {
  field: "kind",
  type: "nominal",
  title: null,
  scale: { domain: ["baseline", "strategy"], range: ["#7f7f7f", "#1f77b4"] }
} as const

/** The Vega-Lite specification of the chart: interval rules, points, and a label beside each point. */
export const plotSpec = (report: EvalReport, points: ReadonlyArray<PlotPoint>) => {
  const x = costAxis(points)
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: `${label(report.dataset)}: accuracy against cost`, subtitle: `${report.items} items · scorer ${report.scorer}` },
    width: 520,
    height: 340,
    background: "white",
    data: { values: points },
    layer: [
      {
        mark: { type: "rule", strokeWidth: 1.5 },
        encoding: {
          x,
          y: { field: "low", type: "quantitative", title: y.title, scale: { domain: [0, 1] }, axis: { format: "%" } },
          y2: { field: "high" },
          color: colour
        }
      },
      { mark: { type: "point", filled: true, size: 70 }, encoding: { x, y, color: colour, shape: { field: "kind", title: null } } },
      { mark: { type: "text", align: "left", dx: 8, dy: -6, fontSize: 11 }, encoding: { x, y, text: { field: "name" } } }
    ]
  }
}

const cannot = (file: string, what: string) => (cause: unknown) =>
  new StoreError({ path: file, message: `--plot ${file}: cannot ${what}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** The SVG of the report's chart. Vega is loaded only now: no other command pays for it. */
export const renderPlot = (report: EvalReport, file: string): Effect.Effect<string, StoreError> =>
  Effect.flatMap(
    Effect.tryPromise({ try: () => import("./plotSvg.js"), catch: cannot(file, "load the plotting library") }),
    (module) => Effect.tryPromise({ try: () => module.svgOf(plotSpec(report, plotPoints(report))), catch: cannot(file, "draw the plot") })
  )

/** Writes the chart to `file` whole or not at all: a temporary sibling, then a rename. */
export const writePlot = (report: EvalReport, file: string): Effect.Effect<void, StoreError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const svg = yield* renderPlot(report, file)
    const fs = yield* FileSystem.FileSystem
    const temp = `${file}.${process.pid}.tmp`
    yield* fs.writeFileString(temp, svg).pipe(
      Effect.zipRight(fs.rename(temp, file)),
      Effect.tapError(() => Effect.ignore(fs.remove(temp))),
      Effect.mapError((e) => new StoreError({ path: file, message: `--plot ${file}: ${plainFsReason(e)}` }))
    )
  })
