import type { ViewerData } from "../../mcp/site/viewerData.js"
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

type Strategy = NonNullable<ViewerData["strategy"]>
type Rank = Extract<Strategy, { name: "rank" }>
type Refine = Extract<Strategy, { name: "refine" }>
type Call = NonNullable<Refine["rounds"]>[number]["answers"][number]

const usageOf = (call: Call): string => {
  const u = call.usage
  const tokens = u !== undefined ? ` · ${u.promptTokens} in · ${u.completionTokens} out` : ""
  return `${call.status}${call.latencyMs !== undefined ? ` · ${(call.latencyMs / 1000).toFixed(1)} s` : ""}${tokens}`
}

/** A call's saved answer, folded: the file's text, or why there is none. */
const answerOf = (data: ViewerData, call: Call, title: string): HTMLElement => {
  const text = call.file !== undefined ? data.texts[call.file] : undefined
  return h(
    "details",
    { class: "call" },
    h("summary", {}, h("strong", {}, title), ` · ${usageOf(call)}`),
    text !== undefined ? pre(text) : h("p", { class: "muted" }, call.error?.message ?? "No answer saved.")
  )
}

/** rank: the aggregate (best first), then each judge's ranking with the models behind its labels, and its reply. */
const rankParts = (data: ViewerData, rank: Rank): ReadonlyArray<HTMLElement> => {
  const modelOf = new Map((rank.labels ?? []).map((l) => [l.label, l.model]))
  const named = (label: string) => (modelOf.has(label) ? `${label} (${modelOf.get(label)})` : label)
  const aggregate = rank.aggregate === undefined ? [] : [h(
    "table",
    { id: "aggregate" },
    h("caption", {}, "Aggregate ranking, best first (Borda points: 1 best, 0 worst)"),
    h("tr", {}, h("th", {}, "#"), h("th", {}, "label"), h("th", {}, "model"), h("th", {}, "points")),
    ...rank.aggregate.map((row, i) =>
      h("tr", {}, h("td", {}, String(i + 1)), h("td", {}, row.label), h("td", {}, row.model), h("td", {}, row.points.toFixed(2)))
    )
  )]
  const judges = (rank.judges ?? []).map((judge) => {
    const ties = (judge.tied ?? []).map((group) => group.join(" = ")).join(", ")
    const ranking = judge.ranking !== undefined
      ? `${judge.ranking.map(named).join(" > ")}${ties !== "" ? ` (level: ${ties})` : ""}`
      : `not counted: ${judge.unparsed ?? judge.status}`
    const own = judge.ownLabels !== undefined && judge.ownLabels.length > 0 ? ` · its own ${judge.ownLabels.join(", ")} left out` : ""
    return h("li", { class: "judge" }, h("strong", {}, judge.model), `: ${ranking}${own}`, answerOf(data, judge, "Its reply"))
  })
  return [
    ...aggregate,
    ...(judges.length > 0 ? [h("h3", {}, "Each judge's ranking"), h("ul", { id: "judges" }, ...judges)] : [])
  ]
}

/** refine: round 1 is the candidates above; each later round, every refined answer. */
const refineParts = (data: ViewerData, refine: Refine): ReadonlyArray<HTMLElement> =>
  (refine.rounds ?? []).map((round) =>
    h(
      "div",
      { class: "round", id: `round-${round.round}` },
      h("h3", {}, `Round ${round.round}: ${round.answers.length} answers`),
      ...round.answers.map((answer) => answerOf(data, answer, answer.model))
    )
  )

/** What the strategy did, by its own record; a strategy without a view of its own here shows its name and note. */
const strategyParts = (data: ViewerData, strategy: Strategy | undefined): ReadonlyArray<HTMLElement> => {
  switch (strategy?.name) {
    case "rank":
      return rankParts(data, strategy)
    case "refine":
      return [h("p", { class: "muted" }, "Round 1 is the candidates' answers above."), ...refineParts(data, strategy)]
    case "self":
      return [h("p", {}, `${strategy.model ?? "One model"} sampled ${strategy.samples ?? "several"} times.`)]
    default:
      return []
  }
}

export const strategySection = (data: ViewerData): HTMLElement | undefined => {
  const strategy = data.manifest?.strategy
  if (strategy === undefined || strategy.name === "synthesize") return undefined
  const parts = strategyParts(data, data.strategy)
  return section(
    "strategy",
    `Strategy: ${strategy.name}`,
    strategy.note !== undefined ? h("p", { class: "muted" }, strategy.note) : undefined,
    ...parts
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
