import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema } from "effect"
import { costOf, formatCount, formatSeconds, plural } from "../domain/format.js"
import type { CandidateRecord, ErrorInfo, Manifest } from "../domain/manifest.js"
import { formatReport } from "../domain/reportFormat.js"
import { stripControl } from "../domain/text.js"
import { strategyCalls, strategySteps } from "../programs/strategies/registry.js"
import { mimeTypeOf, runResourceUri } from "./resources.js"
import { RunOutput } from "./runOutput.js"
import type { FinishedView, RunningView } from "./runView.js"

// Every run-shaped tool result, built in one place. The text blocks and `structuredContent` say the same
// thing, because clients differ in which one their model sees: the answer, a summary, the next step.

export const text = (value: string): ContentBlock => ({ type: "text", text: value })

/** A tool result saying what went wrong, for the model to read and act on. */
export const errorResult = (message: string): CallToolResult => ({ content: [text(message)], isError: true })

/** Why a call failed, in a few words ("HTTP 429: Rate limit exceeded", "cancelled (deadline)"). */
export const failureOf = (
  record: { readonly status: string; readonly error?: ErrorInfo | undefined; readonly reason?: string | undefined }
): string =>
  record.status === "cancelled"
    ? `cancelled${record.reason !== undefined ? ` (${record.reason})` : ""}`
    : record.error?.message ?? record.status

const call = (runId: string) => (tool: string, extra = "") => `${tool} with {"runId": "${runId}"${extra}}`

/** How a result is presented: with `resource_link` blocks (for clients that use them), or text only. */
export interface ResultOptions {
  readonly resourceLinks: boolean
  /** A line put before the summary ("Cancelled at …"). */
  readonly note?: string | undefined
  /** A run without an answer is an `isError` result (default), except where that is what was asked for (cancel_run). */
  readonly noAnswerIsError?: boolean | undefined
}

const filesOf = (runId: string, names: ReadonlyArray<string>): Record<string, string> =>
  Object.fromEntries(names.map((name) => [name, runResourceUri(runId, name)]))

const linksOf = (files: Readonly<Record<string, string>>): Array<ContentBlock> =>
  Object.entries(files).map(([name, uri]) => ({ type: "resource_link", uri, name, mimeType: mimeTypeOf(name) }))

const encode = (output: RunOutput) => Schema.encode(RunOutput)(output).pipe(Effect.orDie)

/**
 * The result: `lead` blocks (the answer), then one text block for the rest (`body`, or the summary and
 * the next step), then `tail` blocks (the disagreement report), then resource links when asked for.
 */
const build = (
  output: RunOutput,
  options: ResultOptions,
  isError: boolean,
  lead: ReadonlyArray<string>,
  body?: ReadonlyArray<string | undefined>,
  tail: ReadonlyArray<string> = []
) =>
  encode(output).pipe(
    Effect.map((structuredContent): CallToolResult => ({
      content: [
        ...lead.map(text),
        text([options.note, ...(body ?? [output.summary, output.next])].filter((line) => line !== undefined).join("\n")),
        ...tail.map(text),
        ...(options.resourceLinks ? linksOf(output.files) : [])
      ],
      structuredContent,
      ...(isError ? { isError: true } : {})
    }))
  )

const candidateOf = (record: CandidateRecord) => ({
  model: record.model,
  status: record.status,
  latencyMs: record.latencyMs,
  attempts: record.attempts,
  servedBy: record.servedBy,
  error: record.error,
  reason: record.reason
})

// --- a finished run ---

const isStopped = (manifest: Manifest): boolean => manifest.status === "cancelled" || manifest.status === "interrupted"

const failuresOf = (manifest: Manifest): Array<string> => [
  ...manifest.candidates.filter((c) => c.status !== "ok").map((c) =>
    `${c.model}: ${failureOf(c)}${c.attempts > 1 ? ` (${c.attempts} attempts)` : ""}`
  ),
  ...(manifest.synthesis && manifest.synthesis.status !== "ok"
    ? [`synthesizer ${manifest.synthesis.model}: ${failureOf(manifest.synthesis)}`]
    : [])
]

const summaryOf = (manifest: Manifest): string => {
  const answered = manifest.candidates.filter((c) => c.status === "ok")
  const synthesis = manifest.synthesis?.fallbackToCandidate !== undefined
    ? `every synthesizer failed, so the answer is ${manifest.synthesis.fallbackToCandidate}'s alone`
    : manifest.synthesis?.status === "ok"
    ? `synthesized by ${manifest.synthesis.model}`
    : "no synthesis"
  const failures = failuresOf(manifest)
  const cost = costOf(manifest.usage)
  const steps = strategySteps(manifest.strategy)
  const strategy = steps === undefined
    ? ""
    : `${steps.text}${steps.degraded !== undefined ? ` (degraded, the strategy fell back: ${stripControl(steps.degraded)})` : ""}; `
  return `Run ${manifest.id}: ${manifest.status}${manifest.error !== undefined ? ` (${manifest.error})` : ""}; ` +
    `${answered.length}/${manifest.candidates.length} candidates answered` +
    `${answered.length > 0 ? ` (${answered.map((c) => c.model).join(", ")})` : ""}; ${strategy}${synthesis}; ` +
    // An interrupted run's duration is not known (its process died without saying when).
    `${manifest.status === "interrupted" ? "time unknown" : formatSeconds(manifest.durationMs)}${cost !== undefined ? `, ${cost}` : ""}.` +
    // A cancel or a crash stopped the calls it cut short: they did not fail.
    (failures.length > 0 ? ` ${isStopped(manifest) ? "Not answered" : "Failed"}: ${failures.join("; ")}.` : "")
}

/**
 * After a cancel or a crash nothing failed: what is on disk is merged again (resynthesize), or looked at
 * again (get_run); asking other models would pay again for what was stopped.
 */
const stoppedNext = (manifest: Manifest, answered: number, hasFinal: boolean): string => {
  const again = call(manifest.id)
  const how = manifest.status === "cancelled" ? "cancelled" : "interrupted"
  const kept = `${plural(answered, "answer")} on disk`
  if (answered === 0) return `The run was ${how} before any answer; ${again("get_run")} shows it as it stands.`
  return hasFinal
    ? `The run was ${how} after its answer; ${again("resynthesize")} merges the ${kept} again ` +
      `(add "synthesizer" to use another model); ${again("get_run")} shows this run again.`
    : `The run was ${how} with ${kept}: ${again("resynthesize")} merges ${answered === 1 ? "it" : "them"} without asking any model again.`
}

const nextOf = (manifest: Manifest, hasFinal: boolean): string | undefined => {
  const answered = manifest.candidates.filter((c) => c.status === "ok").length
  if (isStopped(manifest)) return stoppedNext(manifest, answered, hasFinal)
  const failed = manifest.candidates.filter((c) => c.status !== "ok").map((c) => c.model)
  const again = call(manifest.id)
  if (!hasFinal) {
    return answered > 0
      ? `The ${plural(answered, "answer")} received ${answered === 1 ? "is" : "are"} kept: ${again("resynthesize")} merges ` +
        `${answered === 1 ? "it" : "them"} (add "synthesizer" to use another model).`
      : `Nothing was answered. Check the failures above, then call process_prompt again (with other "models" if a model is unavailable).`
  }
  if (failed.length > 0) {
    return `To retry the failed ${failed.length === 1 ? "model" : "models"}, call process_prompt with "models": ${
      JSON.stringify(failed)
    }; ` +
      `to merge these answers again with another synthesizer, ${again("resynthesize", `, "synthesizer": "…"`)}.`
  }
  return manifest.synthesis?.fallbackToCandidate !== undefined ? `${again("resynthesize")} tries the synthesis again.` : undefined
}

const reportOf = ({ report, synthesis }: Manifest): RunOutput["report"] =>
  report?.status === "ok" && synthesis?.labels !== undefined
    ? { ...report, labels: Object.fromEntries(synthesis.labels.map(({ label, model }) => [label, model])) }
    : report

/** The result of a finished run: the answer first; an `isError` result naming every failure when there is none. */
export const finishedResult = (view: FinishedView, options: ResultOptions) => {
  const { manifest, final, runDir } = view.result
  const files = filesOf(manifest.id, [
    ...(final !== undefined ? ["final.md"] : []),
    ...manifest.candidates.flatMap((c) => [c.file, c.partialFile].filter((f): f is string => f !== undefined)),
    // The strategy's own answers: each judge's ranking, each refinement round.
    ...strategyCalls(manifest.strategy).flatMap((c) => (c.file !== undefined ? [c.file] : [])),
    "prompt.md",
    "run.json"
  ])
  const output: RunOutput = {
    final: final ?? null,
    summary: summaryOf(manifest),
    next: nextOf(manifest, final !== undefined),
    report: reportOf(manifest),
    runId: manifest.id,
    status: manifest.status,
    runDir,
    files,
    candidates: manifest.candidates.map(candidateOf),
    synthesis: manifest.synthesis && {
      model: manifest.synthesis.model,
      status: manifest.synthesis.status,
      latencyMs: manifest.synthesis.latencyMs,
      servedBy: manifest.synthesis.servedBy,
      error: manifest.synthesis.error,
      fallbackToCandidate: manifest.synthesis.fallbackToCandidate
    },
    durationMs: manifest.durationMs,
    usage: manifest.usage,
    error: manifest.error,
    source: manifest.source,
    parent: manifest.parent
  }
  // The report as text too, for clients whose model sees only the text blocks.
  if (final !== undefined) {
    return build(output, options, false, [final], undefined, manifest.report?.status === "ok" ? [formatReport(manifest)] : [])
  }
  // Without an answer, everything needed to act, a line each: what happened, each failure, what to try.
  const body = [
    `No answer from run ${manifest.id}: ${manifest.error ?? "the run failed"} (${manifest.status}` +
    `${manifest.status === "interrupted" ? "" : ` after ${formatSeconds(manifest.durationMs)}`}).`,
    ...failuresOf(manifest).map((line) => `- ${line}`),
    output.next,
    `Files: ${runDir}`
  ]
  return build(output, options, options.noAnswerIsError !== false, [], body)
}

// --- a run still going ---

const streamingNote = (streamed: ReadonlyArray<number> | undefined, index: number): string =>
  streamed !== undefined && (streamed[index] ?? 0) > 0 ? ` (streaming, ~${formatCount(streamed[index] ?? 0)} tokens)` : ""

/** One line on where a live run stands: who answered, who is still going. */
export const progressLine = (view: RunningView, elapsedMs: number): string => {
  const done = view.candidates.filter((c): c is CandidateRecord => c !== undefined)
  const answered = done.filter((c) => c.status === "ok")
  const waiting = view.models.flatMap((
    model,
    i
  ) => (view.candidates[i] === undefined ? [`${model}${streamingNote(view.streamed, i)}`] : []))
  const failed = done.filter((c) => c.status !== "ok").map((c) => `${c.model} failed (${failureOf(c)})`)
  const stage = view.synthesizer !== undefined
    ? `synthesizing with ${view.synthesizer}${streamingNote(view.streamed, view.models.length)}`
    : view.stage ?? `waiting for ${waiting.join(", ") || "the last answer to be saved"}`
  return `${answered.length}/${view.models.length} answered` +
    `${answered.length > 0 ? ` (${answered.map((c) => `${c.model} in ${formatSeconds(c.latencyMs ?? 0)}`).join(", ")})` : ""}` +
    `${failed.length > 0 ? `; ${failed.join("; ")}` : ""}; ${stage}; ${formatSeconds(elapsedMs)} so far`
}

/** A run still going when the wait ended: not an error; the model is told to call get_run. */
export const runningResult = (view: RunningView, elapsedMs: number, options: ResultOptions) => {
  const present = view.candidates.flatMap((c) => (c?.file !== undefined ? [c.file] : []))
  const output: RunOutput = {
    final: null,
    summary: `Run ${view.runId} is still running${view.elsewhere !== undefined ? ` (in ${view.elsewhere})` : ""}: ${
      progressLine(view, elapsedMs)
    }.`,
    next: `Call ${call(view.runId)("get_run")} to wait for the answer (each call waits up to its "wait" seconds); ` +
      `${call(view.runId)("cancel_run")} stops it.`,
    runId: view.runId,
    status: "running",
    runDir: view.runDir,
    files: filesOf(view.runId, [...present, "prompt.md"]),
    candidates: view.models.map((model, i) => {
      const record = view.candidates[i]
      return record !== undefined ? candidateOf(record) : { model, status: view.streamed === undefined ? "waiting" : "running" }
    }),
    ...(view.synthesizer !== undefined ? { synthesis: { model: view.synthesizer, status: "running" } } : {}),
    durationMs: elapsedMs
  }
  return build(output, options, false, [])
}
