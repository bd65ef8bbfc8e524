import { describe, expect, it } from "vitest"
import { maxJsonDepth } from "../support/e2eConstants.js"
import { serverEnv, spawnRawServer } from "../support/mcpHarness.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { waitFor } from "../support/waitFor.js"

// Issue 23, finding 8, where a process is the point: a message too deep for the stdio transport's own parse,
// answered by the built server in one line, without a stack trace naming where it is installed. The same
// bound in process is test/unit/outsideFiles.test.ts's.

const tempDir = makeTempDirs("pllm-deep-json-")

describe("JSON nested too deep, over the built server", () => {
  it("tools/call with arguments 300,000 levels deep answers invalid arguments in one line, naming no install path", async () => {
    const server = await spawnRawServer(
      serverEnv({
        baseUrl: "http://127.0.0.1:9/api/v1",
        outputDir: tempDir(),
        apiKey: "sk-or-test",
        models: ["test/alpha"],
        synthesizer: "test/synth"
      })
    )
    try {
      // Written by hand: JSON.stringify of such a value would itself overflow this process's stack.
      const levels = 300_000
      server.child.stdin!.write(
        `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"process_prompt","arguments":` +
          `{"prompt":"q","models":${"[".repeat(levels)}${"]".repeat(levels)}}}}\n`
      )
      const line = await waitFor("the answer", () => server.stdoutLines().find((l) => l.includes(`"id":"deep"`)))
      expect(JSON.parse(line)).toMatchObject({
        result: {
          isError: true,
          content: [{
            type: "text",
            text: `Invalid arguments for process_prompt: (arguments): invalid: nested deeper than ${maxJsonDepth} levels`
          }]
        }
      })
      expect(server.stderr()).not.toMatch(/RangeError|node_modules|dist\/main/)
    } finally {
      server.child.kill()
      await server.exited
    }
  })
})
