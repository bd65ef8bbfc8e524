import { cancelRunTool } from "./cancelRun.js"
import { continueRunTool } from "./continueRun.js"
import { getConfigTool } from "./getConfig.js"
import { getRunTool } from "./getRun.js"
import { getRunViewTool } from "./getRunView.js"
import { listModelsTool } from "./listModels.js"
import { listRunsTool } from "./listRuns.js"
import { processPromptTool } from "./processPrompt.js"
import { resynthesizeTool } from "./resynthesize.js"
import type { Tool } from "./tool.js"

/** Every tool of the server, in the order `tools/list` shows them. */
export const tools: ReadonlyArray<Tool> = [
  processPromptTool,
  getRunTool,
  continueRunTool,
  cancelRunTool,
  resynthesizeTool,
  listRunsTool,
  listModelsTool,
  getConfigTool
]

/** The run page's own tools (MCP App, `visibility: ["app"]`): listed and callable only where the client renders apps. */
export const appOnlyTools: ReadonlyArray<Tool> = [getRunViewTool]

/** The tool of that name, the app-only ones included when the client renders apps. */
export const toolNamed = (name: string, rendersApps = false): Tool | undefined =>
  tools.find((tool) => tool.name === name) ?? (rendersApps ? appOnlyTools.find((tool) => tool.name === name) : undefined)
