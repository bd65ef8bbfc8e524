import { cancelRunTool } from "./cancelRun.js"
import { continueRunTool } from "./continueRun.js"
import { getConfigTool } from "./getConfig.js"
import { getRunTool } from "./getRun.js"
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

export const toolNamed = (name: string): Tool | undefined => tools.find((tool) => tool.name === name)
