import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Option, Schema } from "effect"
import { formatCount } from "../../domain/format.js"
import { listConfiguredModels } from "../../programs/listConfiguredModels.js"
import { CliAgentStatus } from "../../services/providers/cliAgent/discovery.js"
import { Settings } from "../../services/settings.js"
import { presetPanels } from "../../settings/presets.js"
import { text } from "../results.js"
import { NoArguments } from "./fields.js"
import { defineTool } from "./tool.js"

/** How long `list_models` waits for the provider's model list before answering without it. */
const CATALOGUE_TIMEOUT = "15 seconds" as const

const price = (usd: number | undefined) => (usd === undefined ? "?" : `$${usd.toFixed(2)}`)

export const ListModelsOutput = Schema.Struct({
  models: Schema.Array(
    Schema.Struct({
      role: Schema.Literal("candidate", "synthesizer", "fallback"),
      id: Schema.String,
      /** Whether the provider lists the model; null when its list could not be fetched. */
      found: Schema.NullOr(Schema.Boolean),
      contextLength: Schema.optional(Schema.Number),
      promptUsdPerMillion: Schema.optional(Schema.Number),
      completionUsdPerMillion: Schema.optional(Schema.Number),
      /** A CLI agent's id whose CLI cannot answer here: why. */
      problem: Schema.optional(Schema.String)
    }).annotations({
      jsonSchema: {
        type: "object",
        required: ["role", "id", "found"],
        description:
          "role (candidate, synthesizer, fallback), id, found (null: not checked), contextLength?, promptUsdPerMillion?, completionUsdPerMillion?, problem? (a CLI agent's)"
      }
    })
  ),
  candidates: Schema.Array(Schema.String),
  synthesizer: Schema.String,
  fallbackSynthesizers: Schema.Array(Schema.String),
  /** The CLI agents (`claude-code/…`, `codex/…`, `gemini-cli/…`) as found on the server's PATH. */
  agents: Schema.optional(
    Schema.Array(CliAgentStatus).annotations({
      jsonSchema: { type: "array", description: "CLI agents: cli, executable, found, version?, loggedIn? (absent: unknown), login." }
    })
  ),
  /** Why the provider's model list could not be checked, when it could not. */
  catalogueError: Schema.optional(Schema.String),
  /** The config file's presets: what `preset` of process_prompt may name. */
  presets: Schema.optional(
    Schema.Array(Schema.Struct({ name: Schema.String, models: Schema.Array(Schema.String) })).annotations({
      jsonSchema: { type: "array", description: "Presets for process_prompt: name, models." }
    })
  )
})
export type ListModelsOutput = typeof ListModelsOutput.Type

/** A configured model as the text result says it. */
const modelLine = (m: ListModelsOutput["models"][number]): string =>
  `- ${m.role}: ${m.id}` +
  (m.found === null ? "" : m.found
    ? ` (${
      [
        "found",
        ...(m.contextLength !== undefined ? [`${formatCount(m.contextLength)} tokens context`] : []),
        ...(m.promptUsdPerMillion !== undefined || m.completionUsdPerMillion !== undefined
          ? [`${price(m.promptUsdPerMillion)} in / ${price(m.completionUsdPerMillion)} out per million tokens`]
          : [])
      ].join("; ")
    })`
    : m.problem !== undefined
    ? ` (NOT READY: ${m.problem})`
    : " (NOT FOUND at the provider)")

/** A CLI agent as found on PATH. */
const agentLine = (a: CliAgentStatus): string =>
  `- CLI agent ${a.cli}: ${
    a.found
      ? `${a.executable} ${a.version ?? "?"}${a.loggedIn === undefined ? "" : a.loggedIn ? ", logged in" : ", not logged in"}`
      : "not on PATH"
  }`

export const listModelsTool = defineTool({
  name: "list_models",
  title: "List the configured models",
  description: "The configured candidates, synthesizer and fallbacks as the provider lists them (context length, USD per " +
    "million tokens), and the presets.",
  input: NoArguments,
  output: ListModelsOutput,
  annotations: { readOnlyHint: true, openWorldHint: true },
  needs: ["settings"],
  run: () =>
    Effect.gen(function*() {
      const settings = yield* Settings
      // The CLIs are probed under their own bound (a CLI's start may be slow) while the provider's list is awaited.
      const listing = yield* listConfiguredModels(CATALOGUE_TIMEOUT)
      const panels = presetPanels(settings)
      const output: ListModelsOutput = {
        models: listing.models.map((m) => ({
          role: m.role,
          id: m.id,
          found: m.found ?? null,
          contextLength: m.contextLength,
          promptUsdPerMillion: m.promptPrice,
          completionUsdPerMillion: m.completionPrice,
          problem: m.problem
        })),
        agents: listing.agents,
        candidates: settings.models,
        synthesizer: settings.synthesizer,
        fallbackSynthesizers: settings.fallbackSynthesizers,
        ...(panels.length > 0 ? { presets: panels } : {}),
        catalogueError: Either.isLeft(listing.catalogue) ? listing.catalogue.left : undefined
      }
      const structuredContent = yield* Schema.encode(ListModelsOutput)(output).pipe(Effect.orDie)
      const lines = output.models.map(modelLine)
      const agentLines = (output.agents ?? []).map(agentLine)
      const active = Option.getOrUndefined(settings.preset)
      const presetLines = panels.map((p) => `- preset ${p.name}${p.name === active ? " (active)" : ""}: ${p.models.join(", ")}`)
      const note = output.catalogueError !== undefined ? [`(Not checked against the provider: ${output.catalogueError}.)`] : []
      return { content: [text([...lines, ...presetLines, ...agentLines, ...note].join("\n"))], structuredContent } satisfies CallToolResult
    })
})
