import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { formatSeconds, formatUsd } from "../../domain/format.js"
import { RunStore } from "../../services/runStore.js"
import { runResourceUri } from "../resources.js"
import { errorResult, text } from "../results.js"
import { RunOutputStatus } from "../runOutput.js"
import { defineTool } from "./tool.js"

export const ListRunsInput = Schema.Struct({
  limit: Schema.optionalWith(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 200)).annotations({
      description: "Default 20."
    }),
    { exact: true }
  )
})

export const ListRunsOutput = Schema.Struct({
  runs: Schema.Array(
    Schema.Struct({
      runId: Schema.String,
      /** `running` while a run has no manifest yet. */
      status: RunOutputStatus,
      createdAt: Schema.optional(Schema.String),
      durationMs: Schema.optional(Schema.Number),
      answered: Schema.optional(Schema.Number),
      total: Schema.optional(Schema.Number),
      cost: Schema.optional(Schema.Number),
      prompt: Schema.String,
      runDir: Schema.String,
      /** The final answer as an MCP resource, when there is one. */
      finalUri: Schema.optional(Schema.String),
      source: Schema.optional(Schema.String)
    }).annotations({
      jsonSchema: {
        type: "object",
        required: ["runId", "status", "prompt", "runDir"],
        description: "runId, status, createdAt?, durationMs?, answered?, total?, cost?, prompt (its start), runDir, finalUri?, source?"
      }
    })
  )
})
export type ListRunsOutput = typeof ListRunsOutput.Type

export const listRunsTool = defineTool({
  name: "list_runs",
  title: "List recent runs",
  description: "Recent runs, newest first: id, status, answered/total, duration, cost, the prompt's start, the answer's resource.",
  input: ListRunsInput,
  output: ListRunsOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  needs: ["settings", "outputDir"],
  run: (input) =>
    Effect.gen(function*() {
      const store = yield* RunStore
      const runs = yield* store.listRuns(input.limit ?? 20)
      const output: ListRunsOutput = {
        runs: runs.map((r) => ({
          runId: r.id,
          status: r.manifest?.status ?? "running",
          createdAt: r.manifest?.createdAt,
          durationMs: r.manifest?.durationMs,
          answered: r.manifest?.candidates.filter((c) => c.status === "ok").length,
          total: r.manifest?.candidates.length,
          cost: r.manifest?.usage.cost,
          prompt: r.promptPreview,
          runDir: r.dir,
          finalUri: r.hasFinal ? runResourceUri(r.id, "final.md") : undefined,
          source: r.manifest?.source
        }))
      }
      const structuredContent = yield* Schema.encode(ListRunsOutput)(output).pipe(Effect.orDie)
      const lines = output.runs.map((r) =>
        `- ${r.runId}: ${r.status}${r.answered !== undefined ? `, ${r.answered}/${r.total} answered` : ""}` +
        `${r.durationMs !== undefined ? `, ${formatSeconds(r.durationMs)}` : ""}${r.cost !== undefined ? `, ${formatUsd(r.cost)}` : ""}` +
        ` — ${JSON.stringify(r.prompt.replace(/\s+/g, " ").slice(0, 80))}`
      )
      return {
        content: [
          text(lines.length > 0 ? `${lines.join("\n")}\nget_run with a runId shows a run's answer.` : `No runs yet in ${store.root}.`)
        ],
        structuredContent
      } satisfies CallToolResult
    }).pipe(Effect.catchTag("StoreError", (e) => Effect.succeed(errorResult(`The runs could not be listed: ${e.message}`))))
})
