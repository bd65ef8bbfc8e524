import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

// A minimal MCP Apps host (the io.modelcontextprotocol/ui extension, protocol 2026-01-26), as one HTML page for a
// real browser: it shows the app's HTML in a sandboxed iframe (scripts only, an opaque origin) under the
// extension's default content security policy, answers `ui/initialize`, sends the tool's input and result once
// the app says `ui/notifications/initialized`, sizes the frame on `ui/notifications/size-changed`, and relays
// the app's `tools/call` to the server through `window.relayToolCall` (a function the test exposes, backed by the
// SDK's client in the test process) for the tools the app may call (unless told to offer no `serverTools`);
// anything else is "method not found".

/** The content security policy a host applies when the resource declares no domains (the extension's default). */
export const DEFAULT_APP_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'"

export interface HostSetup {
  /** The resource's HTML, as resources/read gave it. */
  readonly html: string
  /** The arguments of the tool call the app shows, and its result. */
  readonly input: Record<string, unknown>
  readonly result: CallToolResult
  /** The tools whose `_meta.ui.visibility` lets the app call them. */
  readonly appTools: ReadonlyArray<string>
  /** Whether the host relays the app's `tools/call` to the server (`hostCapabilities.serverTools`); yes by default. */
  readonly serverTools?: boolean
}

/** JSON inside a `<script>`: nothing in it can close the element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replaceAll("<", "\\u003c")

const withPolicy = (html: string): string =>
  html.replace(/<head>/i, `<head><meta http-equiv="Content-Security-Policy" content="${DEFAULT_APP_CSP}">`)

const HOST_SCRIPT = `
const setup = JSON.parse(document.getElementById("setup").textContent)
const frame = document.getElementById("app")
const send = (message) => frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*")
const answer = (id, result) => send({ id, result })
const refuse = (id, code, message) => send({ id, error: { code, message } })
window.addEventListener("message", async (event) => {
  if (event.source !== frame.contentWindow) return
  const m = event.data
  if (m === null || typeof m !== "object" || m.jsonrpc !== "2.0" || typeof m.method !== "string") return
  switch (m.method) {
    case "ui/initialize":
      return answer(m.id, {
        protocolVersion: "2026-01-26",
        hostInfo: { name: "minimal-test-host", version: "1.0.0" },
        hostCapabilities: setup.serverTools === false ? {} : { serverTools: {} },
        hostContext: { theme: "dark", displayMode: "inline", platform: "web" }
      })
    case "ui/notifications/initialized":
      send({ method: "ui/notifications/tool-input", params: { arguments: setup.input } })
      return send({ method: "ui/notifications/tool-result", params: setup.result })
    case "ui/notifications/size-changed":
      if (typeof m.params?.height === "number") frame.style.height = Math.min(m.params.height, 20000) + "px"
      return
    case "tools/call": {
      const name = m.params?.name
      if (setup.serverTools === false) return refuse(m.id, -32601, "Method not found: tools/call")
      if (!setup.appTools.includes(name)) return refuse(m.id, -32602, "Tool not callable by this app: " + name)
      try {
        return answer(m.id, await window.relayToolCall(name, m.params.arguments ?? {}))
      } catch (error) {
        return refuse(m.id, -32603, String(error))
      }
    }
    default:
      if (m.id !== undefined) refuse(m.id, -32601, "Method not found: " + m.method)
  }
})
frame.srcdoc = setup.html
`

/** The host page for one tool call's app. */
export const hostPage = (setup: HostSetup): string =>
  [
    `<!doctype html><html><head><meta charset="utf-8"><title>minimal MCP Apps host</title>`,
    `<style>body{margin:0;font-family:sans-serif}header{padding:6px 10px;background:#eee}iframe{display:block;width:100%;height:400px;border:0}</style>`,
    `</head><body><header>minimal MCP Apps host · ${setup.result.isError === true ? "tool error" : "tool result"}</header>`,
    `<iframe id="app" sandbox="allow-scripts" title="app"></iframe>`,
    `<script type="application/json" id="setup">${scriptJson({ ...setup, html: withPolicy(setup.html) })}</script>`,
    `<script>${HOST_SCRIPT}</script></body></html>`
  ].join("\n")
