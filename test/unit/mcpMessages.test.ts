import { describe, expect } from "@effect/vitest"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, type Schema } from "effect"
import type { Manifest } from "../../src/domain/manifest.js"
import { finishedResult } from "../../src/mcp/results.js"
import type { RunOutput } from "../../src/mcp/runOutput.js"
import { decodeArguments } from "../../src/mcp/tools/arguments.js"
import { GetRunInput } from "../../src/mcp/tools/getRun.js"
import { ListRunsInput } from "../../src/mcp/tools/listRuns.js"
import { ProcessPromptInput } from "../../src/mcp/tools/processPrompt.js"
import { itLive } from "../support/itLive.js"

// What a model reads when a call goes wrong or a run was stopped: one plain line naming the field and what
// it may be; after a cancel or a crash, the way to what is on disk, never "failures" or other models.

/** The tools' own input schemas, through the decoder their calls use. */
const inputs: Readonly<Record<"list_runs" | "get_run" | "process_prompt", Schema.Schema.AnyNoContext>> = {
  list_runs: ListRunsInput,
  get_run: GetRunInput,
  process_prompt: ProcessPromptInput
}

const refusal = (tool: keyof typeof inputs, args: unknown) => Effect.flip(decodeArguments(tool, inputs[tool], args))

describe("argument errors", () => {
  itLive.effect("name the field, what it may be (from the advertised schema) and what it got, on one line", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [keyof typeof inputs, unknown, string]> = [
        ["list_runs", { limit: -1 }, "limit: must be a whole number from 1 to 200, got -1"],
        ["list_runs", { limit: "ten" }, `limit: must be a whole number from 1 to 200, got "ten"`],
        ["get_run", { runId: "r", wait: 9999 }, "wait: must be a number from 0 to 3600, got 9999"],
        ["get_run", { wait: 1 }, "runId: required"],
        ["process_prompt", { prompt: "hi", quorum: 1.5 }, "quorum: must be a whole number from 1 to 16, got 1.5"],
        ["process_prompt", { prompt: "hi", deadline: 0 }, "deadline: must be a number from 0.001 to 86400, got 0"],
        ["process_prompt", { prompt: "hi", strategy: "best" }, `strategy: must be one of synthesize, rank, refine, self, got "best"`],
        ["process_prompt", { prompt: 42 }, "prompt: must be a non-empty string, got 42"],
        ["process_prompt", { prompt: "hi", web: "yes" }, `web: must be true or false, got "yes"`],
        ["process_prompt", { prompt: "hi", models: [] }, "models: must be a non-empty list, each a string, got []"],
        ["process_prompt", { prompt: "hi", files: [""] }, `files[0]: must be a non-empty string, got ""`],
        ["process_prompt", { prompt: "hi", temperature: 1 }, "temperature: unknown argument"],
        // A filter's own message stays.
        ["process_prompt", { prompt: "   " }, "prompt: the prompt is empty"]
      ]
      for (const [tool, args, line] of cases) {
        const error = yield* refusal(tool, args)
        expect(error.message, JSON.stringify(args)).toBe(`Invalid arguments for ${tool}: ${line}`)
      }
    }))
})

const manifestOf = (status: Manifest["status"], answered: number, total: number): Manifest => ({
  id: "20260101-000000-000-abcdef12",
  status,
  createdAt: "2026-01-01T00:00:00.000Z",
  finishedAt: "2026-01-01T00:00:05.000Z",
  durationMs: 5000,
  prompt: { chars: 2, sha256: "00" },
  settings: { models: ["a/one", "a/two", "a/three"].slice(0, total), synthesizer: "a/synth", concurrency: 5, timeoutMs: 1000, retries: 0 },
  candidates: ["a/one", "a/two", "a/three"].slice(0, total).map((model, i) =>
    i < answered
      ? { model, status: "ok" as const, attempts: 1, file: `responses/0${i + 1}-${model.replace("/", "-")}.md` }
      : { model, status: "cancelled" as const, attempts: 1, reason: status === "interrupted" ? "interrupted" : "user" }
  ),
  usage: { promptTokens: 10, completionTokens: 10 },
  ...(status === "ok" ? {} : { error: status === "cancelled" ? "cancelled by the client" : "the process ended" })
})

const outputOf = (manifest: Manifest, final?: string) =>
  Effect.map(
    finishedResult({ _tag: "Finished", result: { manifest, final, runDir: "/runs/x" } }, { resourceLinks: false }),
    (result: CallToolResult) => result.structuredContent as RunOutput
  )

describe("next, after a cancel or a crash", () => {
  const call = (tool: string) => `${tool} with {"runId": "20260101-000000-000-abcdef12"}`
  itLive.effect("names resynthesize for the answers on disk or get_run, never failures or other models", () =>
    Effect.gen(function*() {
      const outputs = [
        [yield* outputOf(manifestOf("cancelled", 0, 3)), call("get_run")],
        [yield* outputOf(manifestOf("interrupted", 0, 2)), call("get_run")],
        [yield* outputOf(manifestOf("cancelled", 2, 3)), call("resynthesize")],
        [yield* outputOf(manifestOf("interrupted", 1, 3)), call("resynthesize")],
        [yield* outputOf(manifestOf("cancelled", 2, 3), "The answer."), call("resynthesize")]
      ] as const
      for (const [output, names] of outputs) {
        expect(output.next, output.summary).toContain(names)
        expect(`${output.next} ${output.summary}`).not.toMatch(/fail|retry|other models|process_prompt/i)
      }
      expect(outputs[0][0].next).toBe(`The run was cancelled before any answer; ${call("get_run")} shows it as it stands.`)
      expect(outputs[3][0].next).toBe(
        `The run was interrupted with 1 answer on disk: ${call("resynthesize")} merges it without asking any model again.`
      )
    }))
})
