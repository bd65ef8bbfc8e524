import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { plainFsReason, StoreError } from "../domain/errors.js"
import type { FinishedRunStatus } from "../domain/manifest.js"

// The results file of a batch: one result line per prompt, appended as each one ends, read back on resume.

/** What the results file says about one prompt. The last line for an id is its current state. */
export interface BatchResult {
  readonly id: string
  /** The run directory; null when no run was made (a bad line, a refused prompt). */
  readonly runDir: string | null
  readonly status: FinishedRunStatus
  /** USD spent on this prompt, when the provider reported costs. */
  readonly cost: number | null
  readonly line: number
  readonly durationMs?: number
  readonly error?: string
  readonly promptSha256?: string
  /** The input line itself is wrong (it is reported again on every pass until it is fixed). */
  readonly invalid?: true
}

const PreviousResult = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("ok", "partial", "failed", "cancelled"),
  promptSha256: Schema.optional(Schema.String),
  invalid: Schema.optional(Schema.Boolean),
  line: Schema.optional(Schema.Number),
  error: Schema.optional(Schema.String)
})
const decodePrevious = Schema.decodeUnknownOption(Schema.parseJson(PreviousResult))

/** Ids already answered (ok or partial) in an earlier pass, with the prompt they answered. Unreadable lines are ignored. */
export const answeredIn = (resultsText: string): ReadonlyMap<string, string | undefined> => {
  const last = new Map<string, typeof PreviousResult.Type>()
  for (const raw of resultsText.split("\n")) {
    if (raw.trim() === "") continue
    const previous = decodePrevious(raw)
    if (Option.isSome(previous) && previous.value.invalid !== true) last.set(previous.value.id, previous.value)
  }
  const answered = new Map<string, string | undefined>()
  for (const [id, result] of last) {
    if (result.status === "ok" || result.status === "partial") answered.set(id, result.promptSha256)
  }
  return answered
}

/** The bad lines an earlier pass already reported, as `line:message`: a resume does not append them again. */
export const reportedBadLines = (resultsText: string): ReadonlySet<string> => {
  const reported = new Set<string>()
  for (const raw of resultsText.split("\n")) {
    if (raw.trim() === "") continue
    const previous = decodePrevious(raw)
    if (Option.isSome(previous) && previous.value.invalid === true) reported.add(`${previous.value.line}:${previous.value.error}`)
  }
  return reported
}

/** `questions.jsonl` → `questions.results.jsonl`. */
export const defaultResultsPath = (input: string): string =>
  input.endsWith(".jsonl") ? `${input.slice(0, -".jsonl".length)}.results.jsonl` : `${input}.results.jsonl`

/**
 * The results file of a batch or an eval, opened for appending one JSON line per finished item, one writer at
 * a time. A line an earlier pass left cut short (a crash) is ended first, so it cannot swallow the first new one.
 */
export const openResultsFile = Effect.fnUntraced(function*(file: string, previousText: string) {
  const fs = yield* FileSystem.FileSystem
  const handle = yield* fs.open(file, { flag: "a" }).pipe(
    Effect.mapError((e) => new StoreError({ path: file, message: `cannot open ${file}: ${plainFsReason(e)}` }))
  )
  const lock = yield* Effect.makeSemaphore(1)
  const encoder = new TextEncoder()
  const appendRaw = (data: string) =>
    lock.withPermits(1)(handle.writeAll(encoder.encode(data))).pipe(
      Effect.mapError((e) => new StoreError({ path: file, message: `cannot write ${file}: ${plainFsReason(e)}` }))
    )
  if (previousText !== "" && !previousText.endsWith("\n")) yield* appendRaw("\n")
  return { appendLine: (value: unknown) => appendRaw(`${JSON.stringify(value)}\n`) }
})
