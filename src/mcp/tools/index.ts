import { cancelRun } from "./cancelRun.js"
import { continueRun } from "./continueRun.js"
import { getConfig } from "./getConfig.js"
import { getRun } from "./getRun.js"
import { listModels } from "./listModels.js"
import { listRuns } from "./listRuns.js"
import { processPrompt } from "./processPrompt.js"
import { resynthesize } from "./resynthesize.js"
import type { Tool } from "./tool.js"

/** Every tool of the server, in the order `tools/list` shows them. */
export const tools: ReadonlyArray<Tool> = [processPrompt, getRun, continueRun, cancelRun, resynthesize, listRuns, listModels, getConfig]

export const toolNamed = (name: string): Tool | undefined => tools.find((tool) => tool.name === name)
