import type { CallToolResult, ContentBlock, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Either, Schema } from "effect"
import type { Manifest } from "../domain/manifest.js"
import { formatSeconds } from "../programs/callModel.js"
import { listConfiguredModels } from "../programs/listConfiguredModels.js"
import { resynthesize } from "../programs/resynthesize.js"
import { type RunEvent, type RunResult, runPipeline } from "../programs/runPipeline.js"
import { RunStore } from "../services/RunStore.js"
import { describeSettings, Settings } from "../services/Settings.js"
import { failureOf } from "./progress.js"
import { runResourceUri } from "./resources.js"
import {
  decodeArguments,
  GetConfigOutput,
  ListModelsOutput,
  ListRunsInput,
  ListRunsOutput,
  NoArguments,
  objectJsonSchema,
  ProcessPromptInput,
  ProcessPromptOutput,
  ResynthesizeInput
} from "./toolSchemas.js"

/** How long `list_models` waits for the provider's model list before answering without it. */
const CATALOGUE_TIMEOUT = "15 seconds"

export const toolDefinitions: ReadonlyArray<Tool> = [
  {
    name: "process_prompt",
    title: "Ask several LLMs and synthesize",
    description:
      "Sends the prompt to several LLMs at once (the configured candidate models, or `models`), keeps every answer, " +
      "then has a synthesizer model merge them into one answer that is better than any single one. Returns the final " +
      "answer (Markdown) first, then a summary of the run and links to each candidate's answer as resources. " +
      "A run usually takes 1 to 3 minutes; use it for questions where a second and third opinion are worth the wait and the cost.",
    inputSchema: objectJsonSchema(ProcessPromptInput),
    outputSchema: objectJsonSchema(ProcessPromptOutput),
    annotations: { title: "Ask several LLMs and synthesize", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
  },
  {
    name: "list_models",
    title: "List the configured models",
    description:
      "The configured candidate models, synthesizer and fallback synthesizers, each checked against the provider's model " +
      "list when it can be reached (found or not, context length, prices in USD per million tokens).",
    inputSchema: objectJsonSchema(NoArguments),
    outputSchema: objectJsonSchema(ListModelsOutput),
    annotations: { title: "List the configured models", readOnlyHint: true, openWorldHint: true }
  },
  {
    name: "list_runs",
    title: "List recent runs",
    description:
      "The most recent runs, newest first: id, status, candidates answered, duration, cost, the start of the prompt, " +
      "and the final answer as a resource to read.",
    inputSchema: objectJsonSchema(ListRunsInput),
    outputSchema: objectJsonSchema(ListRunsOutput),
    annotations: { title: "List recent runs", readOnlyHint: true, openWorldHint: false }
  },
  {
    name: "resynthesize",
    title: "Synthesize a past run again",
    description:
      "Merges the stored answers of a past run again, optionally with another synthesizer, without asking the candidate " +
      "models again (only the synthesis is paid). Makes a new run that names its source; returns like process_prompt.",
    inputSchema: objectJsonSchema(ResynthesizeInput),
    outputSchema: objectJsonSchema(ProcessPromptOutput),
    annotations: { title: "Synthesize a past run again", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
  },
  {
    name: "get_config",
    title: "Show the effective settings",
    description: "The server's effective settings (models, timeouts, retries, output directory, …). The API key is never shown.",
    inputSchema: objectJsonSchema(NoArguments),
    outputSchema: objectJsonSchema(GetConfigOutput),
    annotations: { title: "Show the effective settings", readOnlyHint: true, openWorldHint: false }
  }
]

/** A tools/call for a tool this server does not have: a protocol error, not a tool result. */
export class UnknownTool extends Schema.TaggedError<UnknownTool>()("UnknownTool", {
  name: Schema.String,
  message: Schema.String
}) {}

const text = (value: string): ContentBlock => ({ type: "text", text: value })

/** A tool result saying what went wrong, for the model to read and act on. */
const errorResult = (message: string): CallToolResult => ({ content: [text(message)], isError: true })

// --- process_prompt ---

const answered = (manifest: Manifest) => manifest.candidates.filter((c) => c.status === "ok").length

/** The run's files as resource links: the answer, each candidate's answer, the prompt, the manifest. */
const resourceLinks = (manifest: Manifest, hasFinal: boolean): Array<ContentBlock> => {
  const link = (file: string, title: string, description: string): ContentBlock => ({
    type: "resource_link",
    uri: runResourceUri(manifest.id, file),
    name: file,
    title,
    description,
    mimeType: file.endsWith(".json") ? "application/json" : "text/markdown"
  })
  return [
    ...(hasFinal ? [link("final.md", "Final answer", `The synthesized answer of run ${manifest.id}`)] : []),
    ...manifest.candidates.flatMap((c) => [
      ...(c.status === "ok" && c.file !== undefined
        ? [link(c.file, `Answer of ${c.model}`, `${c.model}'s own answer${c.latencyMs !== undefined ? `, in ${formatSeconds(c.latencyMs)}` : ""}`)]
        : []),
      ...(c.partialFile !== undefined
        ? [link(c.partialFile, `Partial answer of ${c.model}`, `What arrived of ${c.model}'s answer before it broke off`)]
        : [])
    ]),
    link("prompt.md", "Prompt", "The prompt as given"),
    link("run.json", "Run manifest", "Status, timings, token usage and errors of every call")
  ]
}

const structuredOf = (result: RunResult) => {
  const { manifest, final, runDir } = result
  const output: ProcessPromptOutput = {
    runId: manifest.id,
    status: manifest.status,
    final: final ?? null,
    runDir,
    candidates: manifest.candidates.map((c) => ({
      model: c.model,
      status: c.status,
      servedBy: c.servedBy,
      latencyMs: c.latencyMs,
      attempts: c.attempts,
      file: c.file,
      uri: c.file !== undefined ? runResourceUri(manifest.id, c.file) : undefined,
      partialFile: c.partialFile,
      error: c.error,
      reason: c.reason
    })),
    synthesis: manifest.synthesis && {
      model: manifest.synthesis.model,
      status: manifest.synthesis.status,
      servedBy: manifest.synthesis.servedBy,
      latencyMs: manifest.synthesis.latencyMs,
      error: manifest.synthesis.error,
      fallbackToCandidate: manifest.synthesis.fallbackToCandidate
    },
    durationMs: manifest.durationMs,
    usage: manifest.usage,
    error: manifest.error
  }
  // Encoding checks the result against the schema the tool advertises (the client validates it too).
  return Schema.encode(ProcessPromptOutput)(output).pipe(Effect.orDie)
}

const failureLines = (manifest: Manifest): Array<string> => [
  ...manifest.candidates.filter((c) => c.status !== "ok").map((c) =>
    `- ${c.model}: ${failureOf(c)}${c.attempts > 1 ? ` (${c.attempts} attempts)` : ""}`
  ),
  ...(manifest.synthesis && manifest.synthesis.status !== "ok"
    ? [`- synthesizer ${manifest.synthesis.model}: ${failureOf(manifest.synthesis)}`]
    : [])
]

const summaryOf = (manifest: Manifest, runDir: string): string => {
  const synthesis = manifest.synthesis?.fallbackToCandidate !== undefined
    ? `every synthesizer failed, so the answer is ${manifest.synthesis.fallbackToCandidate}'s alone`
    : manifest.synthesis
    ? `synthesized by ${manifest.synthesis.model}`
    : "not synthesized"
  const failures = failureLines(manifest)
  return [
    `Run ${manifest.id}: ${manifest.status}; ${answered(manifest)}/${manifest.candidates.length} candidates answered; ` +
    `${synthesis}; ${formatSeconds(manifest.durationMs)}. Files in ${runDir}; each answer is linked below as a resource.`,
    ...(failures.length > 0 ? ["Failures:", ...failures] : [])
  ].join("\n")
}

/** The tool result of a finished run: the answer first, or an `isError` result naming every failure. */
const resultOfRun = Effect.fn("mcp.resultOfRun")(function*(result: RunResult) {
  const { manifest, final, runDir } = result
  const structuredContent = yield* structuredOf(result)
  const links = resourceLinks(manifest, final !== undefined)
  if (final === undefined) {
    const message = [
      `No answer: ${manifest.error ?? "the run failed"} (run ${manifest.id}, ${manifest.status} after ${formatSeconds(manifest.durationMs)}).`,
      ...failureLines(manifest),
      `The run's files are in ${runDir} (manifest: ${runResourceUri(manifest.id, "run.json")}).`
    ].join("\n")
    return { content: [text(message), ...links], structuredContent, isError: true } satisfies CallToolResult
  }
  return { content: [text(final), text(summaryOf(manifest, runDir)), ...links], structuredContent } satisfies CallToolResult
})

const processPrompt = Effect.fn("mcp.processPrompt")(
  function*(args: unknown, onEvent: (event: RunEvent) => Effect.Effect<void>) {
    const input = yield* decodeArguments("process_prompt", ProcessPromptInput, args)
    const seconds = (s: number | undefined) => (s === undefined ? undefined : Math.round(s * 1000))
    const result = yield* runPipeline({
      prompt: input.prompt,
      models: input.models,
      synthesizer: input.synthesizer,
      deadlineMs: seconds(input.deadline),
      quorum: input.quorum,
      graceMs: seconds(input.grace),
      onEvent
    })
    return yield* resultOfRun(result)
  },
  (effect) =>
    effect.pipe(
      // Whatever stops the run before it has a result (bad arguments, a refusal before any call, a run
      // directory that cannot be written) is a result the model can read, never a protocol error.
      Effect.catchAll((e) =>
        Effect.succeed(errorResult(e._tag === "StoreError" ? `The run could not be stored: ${e.message}` : e.message))
      )
    )
)

// --- resynthesize and list_runs ---

const resynthesizeRun = Effect.fn("mcp.resynthesize")(
  function*(args: unknown, onEvent: (event: RunEvent) => Effect.Effect<void>) {
    const input = yield* decodeArguments("resynthesize", ResynthesizeInput, args)
    const result = yield* resynthesize({ runId: input.runId, synthesizer: input.synthesizer, onEvent })
    return yield* resultOfRun(result)
  },
  (effect) =>
    effect.pipe(
      Effect.catchAll((e) =>
        Effect.succeed(errorResult(e._tag === "StoreError" ? `The run could not be stored: ${e.message}` : e.message))
      )
    )
)

const listRuns = Effect.fn("mcp.listRuns")(function*(args: unknown) {
  const input = yield* decodeArguments("list_runs", ListRunsInput, args)
  const store = yield* RunStore
  const runs = yield* store.listRuns(input.limit ?? 20)
  const output: ListRunsOutput = {
    runs: runs.map((r) => ({
      runId: r.id,
      status: r.manifest?.status ?? "running",
      createdAt: r.manifest?.createdAt,
      durationMs: r.manifest?.durationMs,
      answered: r.manifest ? answered(r.manifest) : undefined,
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
    `${r.durationMs !== undefined ? `, ${formatSeconds(r.durationMs)}` : ""}${r.cost !== undefined ? `, $${r.cost.toFixed(4)}` : ""}` +
    ` — ${JSON.stringify(r.prompt.replace(/\s+/g, " ").slice(0, 80))}${r.finalUri ? ` (answer: ${r.finalUri})` : ""}`
  )
  return {
    content: [text(lines.length > 0 ? lines.join("\n") : `No runs yet in ${store.root}.`)],
    structuredContent
  } satisfies CallToolResult
}, (effect) =>
  effect.pipe(
    Effect.catchTags({
      InvalidArguments: (e) => Effect.succeed(errorResult(e.message)),
      StoreError: (e) => Effect.succeed(errorResult(`The runs could not be listed: ${e.message}`))
    })
  ))

// --- list_models ---

const listModels = Effect.fn("mcp.listModels")(function*(args: unknown) {
  yield* decodeArguments("list_models", NoArguments, args)
  const settings = yield* Settings
  const checked = yield* listConfiguredModels().pipe(Effect.timeout(CATALOGUE_TIMEOUT), Effect.either)
  const output: ListModelsOutput = Either.match(checked, {
    onRight: (listing) => ({
      models: listing.models.map((m) => ({
        role: m.role,
        id: m.id,
        found: m.found ?? null,
        contextLength: m.contextLength,
        promptUsdPerMillion: m.promptPrice,
        completionUsdPerMillion: m.completionPrice
      })),
      candidates: settings.models,
      synthesizer: settings.synthesizer,
      fallbackSynthesizers: settings.fallbackSynthesizers,
      catalogueError: Either.isLeft(listing.catalogue) ? listing.catalogue.left : undefined
    }),
    onLeft: () => ({
      models: [
        ...settings.models.map((id) => ({ role: "candidate" as const, id, found: null })),
        { role: "synthesizer" as const, id: settings.synthesizer, found: null },
        ...settings.fallbackSynthesizers.map((id) => ({ role: "fallback" as const, id, found: null }))
      ],
      candidates: settings.models,
      synthesizer: settings.synthesizer,
      fallbackSynthesizers: settings.fallbackSynthesizers,
      catalogueError: `the provider's model list did not arrive within ${CATALOGUE_TIMEOUT}`
    })
  })
  const structuredContent = yield* Schema.encode(ListModelsOutput)(output).pipe(Effect.orDie)
  const price = (usd: number | undefined) => (usd === undefined ? "?" : `$${usd.toFixed(2)}`)
  const lines = output.models.map((m) =>
    `- ${m.role}: ${m.id}` +
    (m.found === null ? "" : m.found ? ` (found; ${m.contextLength?.toLocaleString("en-US") ?? "?"} tokens context; ` +
      `${price(m.promptUsdPerMillion)} in / ${price(m.completionUsdPerMillion)} out per million tokens)` : " (NOT FOUND at the provider)")
  )
  const note = output.catalogueError !== undefined ? [`(Not checked against the provider: ${output.catalogueError}.)`] : []
  return { content: [text([...lines, ...note].join("\n"))], structuredContent } satisfies CallToolResult
}, (effect) => effect.pipe(Effect.catchTag("InvalidArguments", (e) => Effect.succeed(errorResult(e.message)))))

// --- get_config ---

const getConfig = Effect.fn("mcp.getConfig")(function*(args: unknown) {
  yield* decodeArguments("get_config", NoArguments, args)
  const settings = yield* Settings
  // describeSettings never includes the key; encoding keeps exactly the advertised fields.
  const structuredContent = yield* Schema.encode(GetConfigOutput)(describeSettings(settings)).pipe(Effect.orDie)
  return { content: [text(JSON.stringify(structuredContent, null, 2))], structuredContent } satisfies CallToolResult
}, (effect) => effect.pipe(Effect.catchTag("InvalidArguments", (e) => Effect.succeed(errorResult(e.message)))))

// --- dispatch ---

/**
 * Runs one tools/call. Every failure of the tool's work is an `isError` result the model can read; only a
 * tool this server does not have fails (as a protocol error). A defect becomes an `isError` result too, and
 * is logged; interruption (MCP cancel, shutdown) is left alone so the run records itself as cancelled.
 */
export const callTool = Effect.fn("mcp.callTool")(
  function*(name: string, args: unknown, onEvent: (event: RunEvent) => Effect.Effect<void>) {
    switch (name) {
      case "process_prompt":
        return yield* processPrompt(args, onEvent)
      case "list_models":
        return yield* listModels(args)
      case "get_config":
        return yield* getConfig(args)
      case "list_runs":
        return yield* listRuns(args)
      case "resynthesize":
        return yield* resynthesizeRun(args, onEvent)
      default:
        return yield* new UnknownTool({ name, message: `Unknown tool: ${name} (this server has ${toolDefinitions.map((t) => t.name).join(", ")})` })
    }
  },
  (effect, name) =>
    effect.pipe(
      Effect.catchAllDefect((defect) =>
        Effect.logError(`${name}: internal error`, Cause.die(defect)).pipe(
          Effect.as(errorResult(`Internal error in ${name}: ${Cause.pretty(Cause.die(defect)).split("\n")[0] ?? "unknown"}`))
        )
      ),
      Effect.annotateLogs("tool", name)
    )
)
