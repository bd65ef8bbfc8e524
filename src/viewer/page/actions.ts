import type { ActionInput, ActionName, Availability, ViewerHost } from "../../mcp/site/viewerData.js"
import { h, section } from "./dom.js"

// The run's actions, each a button the host enables or disables; a disabled one says why beside it.

const LABELS: Record<ActionName, string> = {
  cancel: "Cancel the run",
  resynthesize: "Re-synthesize",
  followUp: "Ask a follow-up"
}

const control = (
  name: ActionName,
  availability: Availability,
  input: HTMLInputElement | HTMLTextAreaElement | undefined,
  run: (name: ActionName, input: ActionInput) => void
) => {
  const button = h("button", { type: "button", id: `action-${name}`, ...(availability.available ? {} : { disabled: "" }) }, LABELS[name])
  if (input !== undefined && !availability.available) input.disabled = true
  button.addEventListener("click", () => {
    const value = input?.value.trim() ?? ""
    run(name, name === "resynthesize" ? { synthesizer: value } : name === "followUp" ? { prompt: value } : {})
  })
  return h(
    "div",
    { class: "action" },
    input,
    button,
    availability.available ? undefined : h("span", { class: "muted why", id: `why-${name}` }, availability.why)
  )
}

export const actionsSection = (
  availability: Readonly<Record<ActionName, Availability>>,
  host: ViewerHost
): HTMLElement => {
  const said = h("p", { role: "status", "aria-live": "polite", class: "muted" })
  const run = (name: ActionName, input: ActionInput) => {
    said.textContent = "…"
    host.act(name, input).then(
      (line) => (said.textContent = line),
      (error: unknown) => (said.textContent = error instanceof Error ? error.message : String(error))
    )
  }
  const synthesizer = h("input", { type: "text", "aria-label": "Synthesizer model", placeholder: "synthesizer model" })
  const question = h("textarea", { rows: "2", "aria-label": "Follow-up question", placeholder: "a follow-up question" })
  return section(
    "actions",
    "Actions",
    control("cancel", availability.cancel, undefined, run),
    control("resynthesize", availability.resynthesize, synthesizer as HTMLInputElement, run),
    control("followUp", availability.followUp, question as HTMLTextAreaElement, run),
    said
  )
}
