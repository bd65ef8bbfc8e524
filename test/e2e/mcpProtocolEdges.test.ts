import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { type JsonRpcMessage, offlineServerEnv, spawnRawServer } from "../support/mcpHarness.js"
import { tempRoot } from "../support/tempDirs.js"
import { waitFor } from "../support/waitFor.js"

// The MCP server over stdio (the built CLI) at the protocol's edges: raw JSON-RPC junk, as its stdin receives it.
// Tasks of runs this server does not own, or whose files were edited, need no process: unit/mcpForeignTasks.test.ts.

const { root: tmp } = tempRoot("pllm-mcp-edges-")

describe("MCP over stdio: JSON-RPC junk", () => {
  it("answers each junk line with -32600/-32602 (its id when it has one), logs one short line, and goes on", async () => {
    const server = await spawnRawServer(offlineServerEnv(path.join(tmp, "junk")))
    try {
      const junk: ReadonlyArray<readonly [unknown, string | number | null, number, string]> = [
        [{ jsonrpc: "1.0", id: 101, method: "ping" }, 101, -32600, `Invalid Request: jsonrpc must be "2.0"`],
        [{ jsonrpc: "2.0", id: 102, method: "ping", params: null }, 102, -32602, "Invalid params: params must be an object"],
        [{ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }, null, -32600, "Invalid Request: id must be a string or an integer"],
        [
          { jsonrpc: "2.0", id: 103, method: "ping", params: { _meta: { progressToken: { a: 1 } } } },
          103,
          -32602,
          "Invalid params: params._meta.progressToken must be a string or an integer"
        ],
        [
          [{ jsonrpc: "2.0", id: 104, method: "ping" }],
          104,
          -32600,
          "Invalid Request: a batch (JSON array) is not taken on stdio; send one message per line"
        ]
      ]
      const answers: Array<JsonRpcMessage> = []
      for (const [message, id, code, text] of junk) {
        const seen = server.stdoutLines().length
        server.child.stdin!.write(`${JSON.stringify(message)}\n`)
        const answer = await waitFor(`the answer to ${JSON.stringify(message)}`, () => {
          const line = server.stdoutLines().slice(seen).find((l) => l.includes(`"error"`))
          return line === undefined ? undefined : (JSON.parse(line) as JsonRpcMessage)
        })
        expect(answer).toEqual({ jsonrpc: "2.0", id, error: { code, message: text } })
        answers.push(answer)
      }
      // The connection still answers.
      expect((await server.request("ping")).result).toEqual({})
      const warnings = server.stderr().split("\n").filter((line) => line.includes("WARN"))
      expect(warnings).toHaveLength(junk.length)
      for (const line of warnings) expect(line.length).toBeLessThan(200)
      expect(server.stderr()).not.toMatch(/ZodError|"code": "invalid_/)
    } finally {
      server.child.kill("SIGTERM")
      await server.exited
    }
  })
})
