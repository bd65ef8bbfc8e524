import { describe, expect, it } from "vitest"
import { tools } from "../../src/mcp/tools/index.js"
import { TOOL_NAMES } from "../../src/mcp/tools/names.js"

// `serve --help` lists the tools from names.ts, which the CLI's start-up reads without loading the server: the
// names there are the server's, in its order.
describe("the tools' names", () => {
  it("are those of the server's tools, in tools/list order", () => {
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES)
  })
})
