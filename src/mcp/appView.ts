import type { ClientCapabilities, ReadResourceResult, Resource } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { readViewerPage } from "../services/viewerPage.js"
import { ResourceError } from "./resources.js"

// The run viewer as an MCP App (the `io.modelcontextprotocol/ui` extension, SEP-1865): the run-shaped tools
// point at one `ui://` resource, the page built into dist/viewer.html, which a host shows in a sandboxed
// iframe beside the tool's result. Only for a client that declares the extension: a text-only client's
// tools/list, results and resources/list carry not one byte more.

/** The extension's key in the client's `capabilities.extensions`. */
export const UI_EXTENSION = "io.modelcontextprotocol/ui"
/** The MIME type of an MCP App's HTML resource. */
export const APP_MIME_TYPE = "text/html;profile=mcp-app"
export const RUN_VIEW_URI = "ui://parallel-llm/run.html"

/**
 * Whether the client renders MCP Apps: it declares the extension, and when it lists the MIME types it
 * renders, ours among them.
 */
export const rendersApps = (capabilities: ClientCapabilities | undefined): boolean => {
  const entry = capabilities?.extensions?.[UI_EXTENSION]
  if (entry === undefined) return false
  const mimeTypes = "mimeTypes" in entry ? entry.mimeTypes : undefined
  return !Array.isArray(mimeTypes) || mimeTypes.includes(APP_MIME_TYPE)
}

/**
 * Who may see and call a tool in an app-rendering client: "view" tools are the model's and show the page;
 * "app" tools are the page's alone (hosts keep them out of the model's tool list).
 */
export type ToolUi = "view" | "app"

/**
 * A tool's `_meta` for an app-rendering client. The legacy flat key is set beside `ui.resourceUri`, as the
 * extension's own `registerAppTool` helper does, for hosts that predate the nested form.
 */
export const toolUiMeta = (ui: ToolUi) => ({
  ui: { resourceUri: RUN_VIEW_URI, ...(ui === "app" ? { visibility: ["app"] } : {}) },
  "ui/resourceUri": RUN_VIEW_URI
})

/** The page in `resources/list`. */
export const runViewResource: Resource = {
  uri: RUN_VIEW_URI,
  name: "run-viewer",
  title: "parallel-llm run viewer",
  description: "The run as a page: status and progress, the final answer, each candidate, the disagreement report, actions.",
  mimeType: APP_MIME_TYPE
}

/** `resources/read` of the page: its HTML as built, read afresh (a rebuilt page is served at once). */
export const readRunViewPage = readViewerPage.pipe(
  Effect.map((text) => ({ contents: [{ uri: RUN_VIEW_URI, mimeType: APP_MIME_TYPE, text }] }) satisfies ReadResourceResult),
  Effect.mapError((e) =>
    new ResourceError({ uri: RUN_VIEW_URI, code: -32603, message: `The run viewer page is not readable: ${e.message}` })
  )
)
