/** The two tables on stdout: the figures of bench/figures.ts in order, then issue 16's targets beside their floor. */
import { FIGURES, meetsTarget, TARGETS } from "./figures.js"

export const printTables = (figures: Readonly<Record<string, number>>) => {
  printFigures(figures)
  printTargets(figures)
}

const printFigures = (figures: Readonly<Record<string, number>>) => {
  const rows = FIGURES.map((spec) => {
    const value = figures[spec.key]
    const text = value === undefined ? "—" : Number.isInteger(value) ? String(value) : value < 10 ? value.toFixed(3) : value.toFixed(0)
    const target = spec.target === undefined
      ? ""
      : `${spec.target.max !== undefined ? `≤ ${spec.target.max}` : `≥ ${spec.target.min}`} ${
        value === undefined ? "" : meetsTarget(spec, value) ? "met" : "MISSED"
      }`
    return [spec.label, `${text} ${spec.unit}`.trim(), target]
  })
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), 6))
  const header = ["figure", "value", "target"]
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd()
  process.stdout.write([line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n") + "\n")
}

/** Issue 16's targets: the project beside the bare-Node floor measured in the same run, and their ratio. */
const printTargets = (figures: Readonly<Record<string, number>>) => {
  const number = (value: number | undefined) => (value === undefined ? "—" : value < 10 ? value.toFixed(2) : value.toFixed(0))
  const rows = TARGETS.flatMap((t) => {
    const project = figures[`${t.key}.project`]
    if (project === undefined) return []
    const floor = figures[`${t.key}.floor`]
    const ratio = figures[`${t.key}.ratio`]
    const judged = t.goal.ratio !== undefined ? ratio : project
    const limit = t.goal.ratio ?? t.goal.max
    const met = judged === undefined || limit === undefined ? "" : judged <= limit ? "met" : "MISSED"
    return [[
      t.label,
      `${number(project)} ${t.unit}`,
      `${number(floor)} ${t.unit}`,
      ratio === undefined ? "—" : `${ratio.toFixed(2)}×`,
      t.goal.text,
      met
    ]]
  })
  if (rows.length === 0) return
  const all = [["target", "project", "floor", "ratio", "goal", ""], ...rows]
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...all.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i >= 1 && i <= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd()
  process.stdout.write(["", line(all[0]!), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n") + "\n")
}
