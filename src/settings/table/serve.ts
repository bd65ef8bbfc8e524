import { numberIn, switchOn } from "../kinds.js"
import { secondsToMs, withDefault } from "../setting.js"

/** How `serve` answers MCP clients. */
export const serveSettings = {
  mcpWait: withDefault({
    field: "mcpWaitMs",
    kind: numberIn(0, 3_600),
    flag: "mcp-wait",
    env: "PARALLEL_LLM_MCP_WAIT",
    doc: "Seconds an MCP call waits for its run before answering `running` with the run id (0: at once); keep it under the client's timeout",
    default: 45,
    defaultDoc: "45",
    convert: secondsToMs
  }),
  resourceLinks: withDefault({
    field: "resourceLinks",
    kind: switchOn,
    flag: "resource-links",
    env: "PARALLEL_LLM_RESOURCE_LINKS",
    doc: "Add `resource_link` blocks to MCP tool results (some clients fail on them)",
    default: false,
    defaultDoc: "false"
  })
}
