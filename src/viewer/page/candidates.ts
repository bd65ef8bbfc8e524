import type { ViewerData } from "../../mcp/site/viewerData.js"
import { piecesOf, wordsOf } from "./diff.js"
import { h, pre, section } from "./dom.js"

// The candidates side by side on a wide frame, as tabs on a narrow one (the CSS decides which): one panel
// each, with its model, latency, tokens and cost, and its answer with the words the final answer lacks marked.

type Candidate = ViewerData["view"]["candidates"][number]

/** "streaming, ~120 tokens so far" once a running call has streamed something. */
const streaming = (tokens: number | undefined): string | undefined =>
  tokens !== undefined && tokens > 0 ? `streaming, ~${tokens} token${tokens === 1 ? "" : "s"} so far` : undefined

/** How a candidate stands, in a few words: answered, failed (why), cut (why), streaming (tokens so far), running, waiting. */
export const stateOf = (c: Candidate, streamed?: number): string => {
  switch (c.status) {
    case "ok":
      return "answered"
    case "cancelled":
      return `cut${c.reason !== undefined ? ` (${c.reason})` : ""}`
    case "running":
    case "waiting":
      return streaming(streamed) ?? c.status
    default:
      return `failed (${c.error?.message ?? c.status})`
  }
}

const seconds = (ms: number | undefined) => (ms === undefined ? "–" : `${(ms / 1000).toFixed(1)} s`)
const usd = (cost: number | undefined) => (cost === undefined ? "–" : `$${cost < 0.01 ? cost.toPrecision(2) : cost.toFixed(4)}`)

const body = (data: ViewerData, index: number, finalWords: ReadonlySet<string> | undefined): HTMLElement => {
  const record = data.manifest?.candidates[index]
  // Before run.json, an answer is known by its place: responses/NN-<model>.md, NN counted from 01.
  const place = `responses/${String(index + 1).padStart(2, "0")}-`
  const file = record?.file ?? record?.partialFile ??
    Object.keys(data.texts).find((name) => name.startsWith(place) && !name.endsWith(".partial.md"))
  const text = file !== undefined ? data.texts[file] : undefined
  const status = data.view.candidates[index]?.status
  const pending = status === "running" || status === "waiting" ? "Not answered yet." : "No answer saved."
  if (text === undefined) return h("p", { class: "muted" }, file === undefined ? pending : `${file} could not be read.`)
  if (finalWords === undefined) return pre(text, { class: "answer" })
  const { pieces, share } = piecesOf(text, finalWords)
  const answer = h("pre", { class: "answer" }, ...pieces.map((p) => (p.added ? h("mark", {}, p.text) : p.text)))
  return h(
    "div",
    {},
    h("p", { class: "muted" }, `${Math.round(share * 100)} % of its words are not in the final answer (marked).`),
    answer
  )
}

/** Moves the selection with the arrow keys, Home and End, as a tab list does. */
const tabKeys = (tabs: ReadonlyArray<HTMLElement>, select: (index: number) => void) => (event: KeyboardEvent) => {
  const current = tabs.findIndex((tab) => tab === document.activeElement)
  const last = tabs.length - 1
  const next = event.key === "ArrowRight"
    ? (current + 1) % tabs.length
    : event.key === "ArrowLeft"
    ? (current + last) % tabs.length
    : event.key === "Home"
    ? 0
    : event.key === "End"
    ? last
    : undefined
  if (next === undefined) return
  event.preventDefault()
  select(next)
  tabs[next]?.focus()
}

export interface TabState {
  selected: number
}

export const candidatesSection = (data: ViewerData, state: TabState): { element: HTMLElement; select: (index: number) => void } => {
  const { candidates } = data.view
  const finalWords = data.view.final !== null ? wordsOf(data.view.final) : undefined
  const tabs: Array<HTMLElement> = []
  const panels: Array<HTMLElement> = []
  const select = (index: number) => {
    state.selected = index
    tabs.forEach((tab, i) => {
      tab.setAttribute("aria-selected", String(i === index))
      tab.setAttribute("tabindex", i === index ? "0" : "-1")
    })
    panels.forEach((panel, i) => panel.classList.toggle("selected", i === index))
  }
  candidates.forEach((c, i) => {
    const usage = data.manifest?.candidates[i]?.usage
    const tab = h("button", { type: "button", role: "tab", id: `tab-${i}`, "aria-controls": `cand-${i}` }, c.model)
    tab.addEventListener("click", () => select(i))
    tabs.push(tab)
    panels.push(h(
      "article",
      { class: "panel", id: `cand-${i}`, role: "tabpanel", "aria-labelledby": `tab-${i}`, tabindex: "0" },
      h("h3", {}, c.model),
      h(
        "dl",
        { class: "meta" },
        h("dt", {}, "state"),
        h("dd", { class: `state-${c.status}` }, stateOf(c, data.live?.streamed[i])),
        h("dt", {}, "latency"),
        h("dd", {}, seconds(c.latencyMs)),
        h("dt", {}, "tokens"),
        h("dd", {}, usage !== undefined ? `${usage.promptTokens} in · ${usage.completionTokens} out` : "–"),
        h("dt", {}, "cost"),
        h("dd", {}, usd(usage?.cost))
      ),
      body(data, i, finalWords)
    ))
  })
  const list = h("div", { role: "tablist", "aria-label": "Candidates", class: "tabs" }, ...tabs)
  list.addEventListener("keydown", tabKeys(tabs, select))
  select(Math.min(state.selected, Math.max(0, candidates.length - 1)))
  return { element: section("candidates", "Candidates", list, h("div", { class: "panels" }, ...panels)), select }
}
