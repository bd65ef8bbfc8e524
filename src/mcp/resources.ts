import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js"
import type { ListResourcesResult, ReadResourceResult, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Schema } from "effect"
import { InvalidRunPath, type RunSummary } from "../services/runReader.js"
import { RunStore } from "../services/runStore.js"

// Every run's files as MCP resources: `parallel-llm://runs/{runId}/{file}`, `file` relative to the run
// directory. `{file}` is a simple RFC 6570 variable, so the slash of `responses/NN-<slug>.md` is
// percent-encoded in the URIs the server hands out (`responses%2F01-openai-gpt-5.md`); a literal slash
// is accepted too when reading.

export const RUN_RESOURCE_TEMPLATE = "parallel-llm://runs/{runId}/{file}"
const PREFIX = "parallel-llm://runs/"
const template = new UriTemplate(RUN_RESOURCE_TEMPLATE)

/** How many runs `resources/list` looks at, newest first. */
export const LISTED_RUNS = 50

/** The resource URI of a run's file (`file` relative to the run directory, slash and all). */
export const runResourceUri = (runId: string, file: string): string => template.expand({ runId, file })

export const mimeTypeOf = (file: string): string => (file.endsWith(".json") ? "application/json" : "text/markdown")

/** A URI that names no run file, or a file that is not there: `code` is the JSON-RPC error code to answer with. */
export class ResourceError extends Schema.TaggedError<ResourceError>()("ResourceError", {
  uri: Schema.String,
  code: Schema.Number,
  message: Schema.String
}) {}

/** JSON-RPC error code for an unknown resource (MCP specification). */
export const RESOURCE_NOT_FOUND = -32002
const INVALID_PARAMS = -32602
const INTERNAL_ERROR = -32603

/** `{ runId, file }` out of a run resource URI; either form of the slash in `file` is accepted. */
export const parseRunResourceUri = (uri: string): Either.Either<{ readonly runId: string; readonly file: string }, InvalidRunPath> => {
  const invalid = (message: string) => Either.left(new InvalidRunPath({ runId: "", file: uri, message }))
  if (!uri.startsWith(PREFIX)) return invalid(`${JSON.stringify(uri)} is not a run resource (expected ${RUN_RESOURCE_TEMPLATE})`)
  const rest = uri.slice(PREFIX.length)
  const slash = rest.indexOf("/")
  if (slash <= 0) return invalid(`${JSON.stringify(uri)} names no file (expected ${RUN_RESOURCE_TEMPLATE})`)
  const runId = rest.slice(0, slash)
  return Either.try({
    try: () => decodeURIComponent(rest.slice(slash + 1)),
    catch: () => new InvalidRunPath({ runId, file: rest.slice(slash + 1), message: `${JSON.stringify(uri)} is not a valid URI` })
  }).pipe(Either.map((file) => ({ runId, file })))
}

export const resourceTemplates: ReadonlyArray<ResourceTemplate> = [{
  uriTemplate: RUN_RESOURCE_TEMPLATE,
  name: "run-file",
  title: "A file of a parallel-llm run",
  description: "A file of a past run: prompt.md, final.md (the synthesized answer), run.json (the manifest) or " +
    "responses/NN-<model>.md (one candidate's answer; .partial.md when it broke off; the slash may be written %2F). The runId and the files " +
    "of a run are in process_prompt's result.",
  mimeType: "text/markdown"
}]

const oneLine = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const describeRun = (run: RunSummary): string => {
  const m = run.manifest
  const facts = m === undefined
    ? "still running"
    : `${m.status}, ${m.candidates.filter((c) => c.status === "ok").length}/${m.candidates.length} answered, ${m.createdAt}`
  return `Final answer of run ${run.id} (${facts}). Prompt: ${oneLine(run.promptPreview, 160)}`
}

/** `resources/list`: the final answers of the newest runs. */
export const listRunResources = Effect.fn("mcp.listRunResources")(function*() {
  const store = yield* RunStore
  const runs = yield* store.listRuns(LISTED_RUNS).pipe(
    Effect.catchAll((e) => Effect.logWarning(`cannot list the runs: ${e.message}`).pipe(Effect.as([])))
  )
  return {
    resources: runs.filter((run) => run.hasFinal).map((run) => ({
      uri: runResourceUri(run.id, "final.md"),
      name: `${run.id}/final.md`,
      title: `Answer: ${oneLine(run.promptPreview, 60) || run.id}`,
      description: describeRun(run),
      mimeType: "text/markdown"
    }))
  } satisfies ListResourcesResult
})

/** `resources/read`: one file of a run, validated against the run layout. */
export const readRunResource = Effect.fn("mcp.readRunResource")(function*(uri: string) {
  const store = yield* RunStore
  const { runId, file } = yield* parseRunResourceUri(uri)
  const text = yield* store.readRunFile(runId, file)
  return { contents: [{ uri, mimeType: mimeTypeOf(file), text }] } satisfies ReadResourceResult
}, (effect, uri) =>
  effect.pipe(
    Effect.catchTags({
      InvalidRunPath: (e) => new ResourceError({ uri, code: INVALID_PARAMS, message: `Invalid resource: ${e.message}` }),
      RunFileNotFound: (e) => new ResourceError({ uri, code: RESOURCE_NOT_FOUND, message: `Resource not found: ${e.message}` }),
      StoreError: (e) => new ResourceError({ uri, code: INTERNAL_ERROR, message: `Resource not readable: ${e.message}` })
    })
  ))
