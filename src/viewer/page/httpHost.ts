import type { ActionName, Availability, HttpEnvelope, ViewerData, ViewerHost } from "../../mcp/site/viewerData.js"

// The page's host over loopback HTTP (`parallel-llm runs open`): the run from `view.json` beside the page,
// with the session cookie the browser sends by itself; actions as POSTs, offered as the server says.

export const httpHost = (base: string): ViewerHost => {
  let offered: Readonly<Record<ActionName, Availability>> | undefined
  const unavailable: Availability = { available: false, why: "not offered here" }
  return {
    load: async (): Promise<ViewerData> => {
      const response = await fetch(`${base}view.json`, { credentials: "same-origin", cache: "no-store" })
      if (!response.ok) throw new Error(`the server answered ${response.status}: ${(await response.text()).slice(0, 200)}`)
      const envelope = (await response.json()) as HttpEnvelope
      offered = envelope.actions
      return envelope.data
    },
    availability: () => offered ?? { cancel: unavailable, resynthesize: unavailable, followUp: unavailable },
    act: async (action, input) => {
      const response = await fetch(`${base}actions/${action}`, {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input)
      })
      const text = await response.text()
      if (!response.ok) throw new Error(text.slice(0, 300))
      return text.slice(0, 300)
    }
  }
}
