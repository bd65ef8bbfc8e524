import { describe, expect } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { type CallToolResult, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Ajv } from "ajv"
import { Effect } from "effect"
import { connectInProcess, serverServices } from "../support/inProcessMcp.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { layerTestLogging } from "../support/testLogging.js"
import { layerTestSettings } from "../support/testSettings.js"

// What every conversation with the server carries: the tool list. A client hands its model each tool's name,
// description and input schema; the rest (titles, annotations, output schemas) only the client reads.

const tempDir = makeTempDirs("pllm-tool-list-")

const withServer = <A>(test: (client: Client) => Effect.Effect<A>) =>
  Effect.gen(function*() {
    const provider = yield* makeScriptedClient({ "test/synth": [{ answer: "Merged: 4." }] })
    const services = serverServices(layerTestSettings({ outputDir: tempDir() }), provider.layer, layerTestLogging([]))
    return yield* Effect.flatMap(connectInProcess, test).pipe(Effect.provide(services))
  }).pipe(Effect.scoped)

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  // The SDK client checks `structuredContent` against the tool's outputSchema and throws when it does not match.
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)

describe("tools/list", () => {
  itLive.effect(
    "fits: at most 5,000 bytes for the model (names, descriptions, input schemas), 9,000 in all",
    () =>
      withServer((client) =>
        Effect.gen(function*() {
          const list = yield* Effect.promise(() => client.request({ method: "tools/list" }, ListToolsResultSchema))
          const forModel = list.tools.map(({ description, inputSchema, name }) => ({ name, description, inputSchema }))
          expect(bytes(forModel)).toBeLessThanOrEqual(5_000)
          expect(bytes(list)).toBeLessThanOrEqual(9_000)
          for (const tool of list.tools) {
            // When to call it and what comes back, in a sentence or two.
            expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(60)
            const schemas = JSON.stringify([tool.inputSchema, tool.outputSchema])
            expect(schemas, tool.name).not.toMatch(/"title":"|\$schema|"required":\[\]|at least 1 character/)
          }
          // One run-shaped output schema, on the tools that start and fetch runs; the others say they return alike.
          expect(list.tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name)).toEqual([
            "process_prompt",
            "get_run",
            "list_runs",
            "list_models",
            "get_config"
          ])
          for (const name of ["continue_run", "resynthesize", "cancel_run"]) {
            expect(list.tools.find((t) => t.name === name)?.description).toMatch(
              /(returns|state), like process_prompt|returns like process_prompt/
            )
          }
        })
      )
  )

  itLive.effect(
    "every successful result matches its output schema; the run-shaped ones process_prompt's",
    () =>
      withServer((client) =>
        Effect.gen(function*() {
          const { tools } = yield* Effect.promise(() => client.listTools())
          const runOutput = new Ajv({ strict: false }).compile(tools.find((t) => t.name === "process_prompt")?.outputSchema ?? {})
          const runShaped = (result: CallToolResult) => {
            expect(result.isError).toBeFalsy()
            expect(runOutput(result.structuredContent), JSON.stringify(runOutput.errors)).toBe(true)
            return result.structuredContent as { readonly runId: string; readonly final: string | null }
          }
          const first = runShaped(yield* call(client, "process_prompt", { prompt: "What is 2+2?" }))
          expect(first.final).toBe("Merged: 4.")
          runShaped(yield* call(client, "get_run", { runId: first.runId }))
          runShaped(yield* call(client, "continue_run", { runId: first.runId, prompt: "And 3+3?" }))
          runShaped(yield* call(client, "resynthesize", { runId: first.runId }))
          const waiting = runShaped(yield* call(client, "process_prompt", { prompt: "Later?", wait: 0 }))
          runShaped(yield* call(client, "cancel_run", { runId: waiting.runId }))
          for (const name of ["list_runs", "list_models", "get_config"]) {
            expect((yield* call(client, name)).isError, name).toBeFalsy()
          }
        })
      )
  )
})
