import { describe, expect } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { connectInProcess, serverServices } from "../support/inProcessMcp.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { layerTestLogging } from "../support/testLogging.js"
import { layerTestSettings } from "../support/testSettings.js"

// A provider's text on its way to an MCP client: no escape codes (ESC, BEL, the 8-bit CSI) and no bidi
// overrides or isolates, in the text blocks, in structuredContent and in resources/read; the files on disk
// keep the answer as it came.

const tempDir = makeTempDirs("pllm-hygiene-")
const HOSTILE = "\u001b]0;owned\u0007\u001b[2J\u009b31m \u202Eevil\u202C \u2066iso\u2069"
const ANSWER = `# Answer\n\n\tIndented ${HOSTILE} end.\r\n`
const CLEAN = "# Answer\n\n\tIndented ]0;owned[2J31m evil iso end.\n"
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/

const withServer = <A>(outputDir: string, test: (client: Client) => Effect.Effect<A>) =>
  Effect.gen(function*() {
    const provider = yield* makeScriptedClient({
      "test/synth": [{ answer: ANSWER }],
      "test/alpha": [{ answer: `alpha ${HOSTILE}` }]
    })
    const services = serverServices(layerTestSettings({ outputDir }), provider.layer, layerTestLogging([]))
    return yield* Effect.flatMap(connectInProcess, test).pipe(Effect.provide(services))
  }).pipe(Effect.scoped)

/** Every string anywhere in a value. */
const stringsIn = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
    ? value.flatMap(stringsIn)
    : typeof value === "object" && value !== null
    ? Object.values(value).flatMap(stringsIn)
    : []

describe("what an MCP client is given", () => {
  itLive.effect("has no control or bidi characters: content, structuredContent, resources/read; the files keep them", () => {
    const outputDir = tempDir()
    return withServer(outputDir, (client) =>
      Effect.gen(function*() {
        const result = (yield* Effect.promise(() =>
          client.callTool({ name: "process_prompt", arguments: { prompt: "Hi?" } })
        )) as CallToolResult
        expect(result.isError).toBeFalsy()
        const first = result.content[0]
        expect(first?.type === "text" ? first.text : "").toBe(CLEAN)
        const structured = result.structuredContent as { final: string; runId: string; files: Record<string, string> }
        expect(structured.final).toBe(CLEAN)
        for (const text of stringsIn(result)) expect(text).not.toMatch(CONTROL)

        for (const file of ["final.md", "responses/01-test-alpha.md"]) {
          const uri = structured.files[file]
          expect(uri, file).toBeDefined()
          const read = yield* Effect.promise(() => client.readResource({ uri: uri ?? "" }))
          for (const text of stringsIn(read)) expect(text, file).not.toMatch(CONTROL)
        }
        const read = yield* Effect.promise(() => client.readResource({ uri: structured.files["final.md"] ?? "" }))
        expect(stringsIn(read.contents[0])).toContain(CLEAN)

        // The run's own record is the answer as it came.
        expect(fs.readFileSync(path.join(outputDir, structured.runId, "final.md"), "utf8")).toContain(HOSTILE)

        const again = yield* Effect.promise(() => client.callTool({ name: "get_run", arguments: { runId: structured.runId } }))
        for (const text of stringsIn(again)) expect(text).not.toMatch(CONTROL)
      }))
  })
})
