import { POLL_INTERVAL_MS, type ViewerData, type ViewerHost } from "../../mcp/site/viewerData.js"
import type { ActionDrafts } from "./actions.js"
import { appHost } from "./appHost.js"
import type { TabState } from "./candidates.js"
import { h } from "./dom.js"
import { httpHost } from "./httpHost.js"
import { renderRun } from "./render.js"

// The viewer's entry: load the run, show it, and while it is running ask again, no faster than every 2 s.
// The host is chosen here: loopback HTTP (httpHost.ts), or an MCP Apps host over postMessage (appHost.ts).

const root = document.getElementById("app")
const tabs: TabState = { selected: 0 }
const drafts: ActionDrafts = { synthesizer: "", question: "" }

const show = (node: HTMLElement) => root?.replaceChildren(node)

const follow = async (host: ViewerHost) => {
  let last = ""
  for (;;) {
    let data: ViewerData
    try {
      data = await host.load()
    } catch (error) {
      show(h("main", {}, h("h1", {}, "The run could not be loaded"), h("p", { role: "alert" }, String(error))))
      return
    }
    const text = JSON.stringify(data)
    // Built again only when the run changed, so that focus and scrolling stay put between polls.
    if (text !== last) show(renderRun(data, host.availability(data), host, tabs, drafts))
    last = text
    document.title = `${data.view.status} · run ${data.view.runId}`
    const next = host.nextLoadIn !== undefined
      ? host.nextLoadIn(data)
      : data.view.status === "running"
      ? POLL_INTERVAL_MS
      : undefined
    if (next !== undefined) await new Promise((resolve) => setTimeout(resolve, next))
    // A finished run is shown until the host has another (an action of the page started it), if it ever does.
    else if (host.switched !== undefined) await host.switched()
    else return
  }
}

// In a frame it is an MCP Apps host's view (runs open forbids framing: frame-ancestors 'none').
void follow(
  window.parent !== window
    ? appHost()
    : httpHost(location.pathname.endsWith("/") ? location.pathname : `${location.pathname}/`)
)
