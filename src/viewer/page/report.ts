import type { ViewerData } from "../viewerData.js"
import { h, pre, section } from "./dom.js"

// The disagreement report and the strategy's own work (rank's rankings, refine's rounds).

/** A candidate named by its label, linked to its panel: `A (model)`. */
const who = (data: ViewerData, label: string, select: (index: number) => void): HTMLElement => {
  const labels = data.view.report?.status === "ok" ? data.view.report.labels : undefined
  const model = labels?.[label]
  const index = model === undefined ? -1 : data.view.candidates.findIndex((c) => c.model === model)
  if (index < 0) return h("span", {}, model === undefined ? label : `${label} (${model})`)
  const link = h("a", { href: `#cand-${index}` }, `${label} (${model})`)
  link.addEventListener("click", () => select(index))
  return link
}

const list = (items: ReadonlyArray<Node | string>) => h("ul", {}, ...items.map((item) => h("li", {}, item)))

export const reportSection = (data: ViewerData, select: (index: number) => void): HTMLElement | undefined => {
  const report = data.view.report
  if (report === undefined) return undefined
  if (report.status !== "ok") return section("report", "Disagreement report", h("p", { class: "muted" }, `Unavailable: ${report.reason}`))
  const joined = (labels: ReadonlyArray<string>) => {
    const span = h("span", {})
    labels.forEach((label, i) => span.append(...(i > 0 ? [", "] : []), who(data, label, select)))
    return span
  }
  return section(
    "report",
    "Disagreement report",
    h("p", {}, h("strong", {}, `Confidence: ${report.confidence}`), report.confidenceReason ? ` — ${report.confidenceReason}` : ""),
    h("h3", {}, "Agreements"),
    report.agreements.length > 0 ? list(report.agreements) : h("p", { class: "muted" }, "None listed."),
    h("h3", {}, "Contradictions"),
    report.contradictions.length > 0
      ? list(
        report.contradictions.map((c) =>
          h("div", {}, h("strong", {}, c.topic), list(c.positions.map((p) => h("span", {}, joined(p.candidates), ": ", p.claim))))
        )
      )
      : h("p", { class: "muted" }, "None."),
    h("h3", {}, "Lone claims"),
    report.uniqueClaims.length > 0
      ? list(report.uniqueClaims.map((u) => h("span", {}, who(data, u.candidate, select), ": ", u.claim)))
      : h("p", { class: "muted" }, "None.")
  )
}

export const strategySection = (data: ViewerData): HTMLElement | undefined => {
  const strategy = data.manifest?.strategy
  if (strategy === undefined) return undefined
  // What each strategy's record holds (a union tagged by name): rank's ranking, refine's rounds.
  const aggregateRows = "aggregate" in strategy ? strategy.aggregate : undefined
  const judgeRecords = "judges" in strategy ? strategy.judges : undefined
  const roundRecords = "rounds" in strategy ? strategy.rounds : undefined
  if (aggregateRows === undefined && judgeRecords === undefined && roundRecords === undefined) return undefined
  const aggregate = aggregateRows === undefined ? undefined : h(
    "table",
    {},
    h("caption", {}, "Aggregate ranking (Borda points, 1 best)"),
    h("tr", {}, h("th", {}, "#"), h("th", {}, "label"), h("th", {}, "model"), h("th", {}, "points")),
    ...aggregateRows.map((row, i) =>
      h("tr", {}, h("td", {}, String(i + 1)), h("td", {}, row.label), h("td", {}, row.model), h("td", {}, row.points.toFixed(2)))
    )
  )
  const judges = (judgeRecords ?? []).map((judge) =>
    h(
      "li",
      {},
      `${judge.model}: `,
      judge.ranking !== undefined ? judge.ranking.join(" > ") : `not counted (${judge.unparsed ?? judge.status})`
    )
  )
  const rounds = (roundRecords ?? []).map((round) =>
    h(
      "details",
      {},
      h("summary", {}, `Round ${round.round}: ${round.answers.length} answers`),
      ...round.answers.map((answer) =>
        h("div", {}, h("h4", {}, `${answer.model} · ${answer.status}`), pre(answer.file !== undefined ? data.texts[answer.file] ?? "" : ""))
      )
    )
  )
  return section(
    "strategy",
    `Strategy: ${strategy.name}`,
    strategy.note !== undefined ? h("p", { class: "muted" }, strategy.note) : undefined,
    aggregate,
    judges.length > 0 ? h("div", {}, h("h3", {}, "Each judge's ranking"), h("ul", {}, ...judges)) : undefined,
    ...rounds
  )
}

export const threadSection = (data: ViewerData): HTMLElement | undefined =>
  data.thread.length === 0 ? undefined : section(
    "thread",
    "Thread",
    ...data.thread.map((turn, i) =>
      h("div", { class: "turn" }, h("h3", {}, `Turn ${i + 1} · run ${turn.runId}`), pre(turn.prompt, { class: "prompt" }), pre(turn.answer))
    ),
    h("p", { class: "muted" }, `Turn ${data.thread.length + 1} is this run.`)
  )

export const filesSection = (data: ViewerData): HTMLElement =>
  section(
    "files",
    "Files",
    h("p", { class: "muted" }, "In ", h("code", {}, data.view.runDir), ":"),
    h("ul", { class: "files" }, ...Object.keys(data.view.files).map((file) => h("li", {}, h("code", {}, file))))
  )
