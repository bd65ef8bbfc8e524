import type { ActionName, Availability, ViewerData, ViewerHost } from "../../mcp/site/viewerData.js"
import { type ActionDrafts, actionsSection } from "./actions.js"
import { candidatesSection, stateOf, type TabState } from "./candidates.js"
import { h, pre, section } from "./dom.js"
import { filesSection, reportSection, strategySection, threadSection } from "./report.js"

// The whole page for one state of the run, built afresh each time the run changes.

const header = (data: ViewerData): HTMLElement => {
  const { view } = data
  const cost = view.usage?.cost
  return h(
    "header",
    {},
    h("h1", {}, `Run ${view.runId}`),
    h(
      "p",
      {},
      h("span", { class: `badge status-${view.status}`, id: "status" }, view.status),
      view.durationMs !== undefined ? ` ${(view.durationMs / 1000).toFixed(1)} s` : "",
      cost !== undefined ? ` · $${cost.toFixed(4)}` : "",
      view.source !== undefined ? ` · re-synthesis of run ${view.source}` : "",
      view.parent !== undefined ? ` · follow-up of run ${view.parent}` : ""
    ),
    h("p", { class: "summary" }, view.summary)
  )
}

const progress = (data: ViewerData): HTMLElement => {
  const { candidates, synthesis } = data.view
  const streamed = data.live?.streamed ?? []
  const synthesizing = synthesis?.status === "running" ? streamed[candidates.length] ?? 0 : 0
  return section(
    "progress",
    "Progress",
    h(
      "ul",
      { class: "progress" },
      ...candidates.map((c, i) =>
        h("li", { class: `state-${c.status}`, id: `progress-${i}` }, h("strong", {}, c.model), ` ${stateOf(c, streamed[i])}`)
      ),
      synthesis !== undefined &&
        h(
          "li",
          { class: `state-${synthesis.status}`, id: "progress-synthesis" },
          h("strong", {}, synthesis.model),
          ` synthesizer: ${synthesis.status}${synthesizing > 0 ? `, ~${synthesizing} tokens so far` : ""}`
        )
    ),
    data.live?.stage !== undefined && h("p", { class: "muted", id: "stage" }, data.live.stage)
  )
}

const finalSection = (data: ViewerData): HTMLElement =>
  section(
    "final",
    "Final answer",
    data.view.final !== null
      ? pre(data.view.final, { class: "answer", id: "final-answer" })
      : h("p", { class: "muted" }, data.view.status === "running" ? "Not yet: the run is going." : data.view.error ?? "No answer.")
  )

export const renderRun = (
  data: ViewerData,
  availability: Readonly<Record<ActionName, Availability>>,
  host: ViewerHost,
  tabs: TabState,
  drafts: ActionDrafts
): HTMLElement => {
  const candidates = candidatesSection(data, tabs)
  const prompt = data.texts["prompt.md"]
  return h(
    "main",
    {},
    header(data),
    progress(data),
    prompt !== undefined && section("prompt", "Prompt", pre(prompt, { class: "prompt" })),
    finalSection(data),
    candidates.element,
    reportSection(data, candidates.select),
    strategySection(data),
    threadSection(data),
    actionsSection(availability, host, drafts),
    filesSection(data)
  )
}
