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

/**
 * What the reader has typed into the actions' fields. The page is built again whenever the run changes (a live
 * run, or the host's first fresh view after the tool result), and new fields would otherwise come up empty.
 */
export interface ActionDrafts {
  synthesizer: string
  question: string
}

/** A field that starts with its draft and keeps it up to date. */
const drafted = <E extends HTMLInputElement | HTMLTextAreaElement>(element: E, value: string, keep: (value: string) => void): E => {
  element.value = value
  element.addEventListener("input", () => keep(element.value))
  return element
}

export const actionsSection = (
  availability: Readonly<Record<ActionName, Availability>>,
  host: ViewerHost,
  drafts: ActionDrafts
): HTMLElement => {
  const said = h("p", { role: "status", "aria-live": "polite", class: "muted" })
  const run = (name: ActionName, input: ActionInput) => {
    said.textContent = "…"
    host.act(name, input).then(
      (line) => {
        said.textContent = line
        // Sent: the next build of the page (the new run's) starts with an empty field.
        if (name === "resynthesize") drafts.synthesizer = ""
        if (name === "followUp") drafts.question = ""
      },
      (error: unknown) => (said.textContent = error instanceof Error ? error.message : String(error))
    )
  }
  const synthesizer = drafted(
    h("input", { type: "text", "aria-label": "Synthesizer model", placeholder: "synthesizer model" }) as HTMLInputElement,
    drafts.synthesizer,
    (value) => (drafts.synthesizer = value)
  )
  const question = drafted(
    h("textarea", { rows: "2", "aria-label": "Follow-up question", placeholder: "a follow-up question" }) as HTMLTextAreaElement,
    drafts.question,
    (value) => (drafts.question = value)
  )
  return section(
    "actions",
    "Actions",
    control("cancel", availability.cancel, undefined, run),
    control("resynthesize", availability.resynthesize, synthesizer, run),
    control("followUp", availability.followUp, question, run),
    said
  )
}
