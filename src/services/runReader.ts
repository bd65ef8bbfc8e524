import type { FileSystem, Path } from "@effect/platform"
import { Clock, Effect, Option, Schema } from "effect"
import { fsFailure, StoreError } from "../domain/errors.js"
import { ShallowJson } from "../domain/jsonDepth.js"
import { Manifest } from "../domain/manifest.js"
import { decideRunState, OWNER_FILE, OwnerRecord, runIdTime, type RunState } from "../domain/runState.js"
import { type FileRefused, readFileSafely } from "../domain/safeFile.js"
import { probePid, thisHost } from "./processProbe.js"
import { answersIn, newestOf, type RunsDir, sweep } from "./runFolders.js"

// The read side of the run store: every file is opened once, without following a symlink, and the opened
// file's real path is checked to be its place in the runs directory, so a symlink placed inside it (even one
// swapped in between a check and the read) cannot make a reader return a file elsewhere.

/** A run id as `createRun` makes them: `YYYYMMDD-HHMMSS-mmm-<8 hex>`. */
export const RUN_ID_PATTERN = /^\d{8}-\d{6}-\d{3}-[0-9a-f]{8}$/

/**
 * The files of a run that may be read back, relative to the run directory: exactly the run layout.
 * No `..`, no absolute path and no other directory can match, so a reader cannot leave the run.
 */
export const RUN_FILE_PATTERN = /^(?:prompt\.md|final\.md|run\.json|(?:responses|rankings|rounds\/\d{1,2})\/\d{2,}-[A-Za-z0-9._-]+\.md)$/

/** The folder of a run that holds the copies of its attached files. */
export const ATTACHMENTS_DIR = "attachments"
/** An attachment's copy: `NN-<name>`, the name made of safe characters only. */
const ATTACHMENT_NAME = /^\d{2,}-[A-Za-z0-9._-]+$/

/** A run id or file name that is not part of the run layout (a typo, or an attempt to leave the run directory). */
export class InvalidRunPath extends Schema.TaggedError<InvalidRunPath>()("InvalidRunPath", {
  runId: Schema.String,
  file: Schema.String,
  message: Schema.String
}) {}

/** A well-formed run id or file that does not exist (yet): an unknown run, a failed candidate, a run still going. */
export class RunFileNotFound extends Schema.TaggedError<RunFileNotFound>()("RunFileNotFound", {
  runId: Schema.String,
  file: Schema.String,
  message: Schema.String
}) {}

/** One run as read from disk. */
export interface RunView {
  readonly id: string
  /** Absolute path of the run directory. */
  readonly dir: string
  /** Decided from `run.json` and the owner record: see `decideRunState`. */
  readonly state: RunState
  /** The manifest; absent while the run is going, when its writer died, or when `run.json` cannot be read. */
  readonly manifest: Manifest | undefined
  /** The owner record, while the run has no manifest. */
  readonly owner: OwnerRecord | undefined
  /** The answers on disk (`responses/NN-<slug>.md` and `.partial.md`), sorted. */
  readonly answers: ReadonlyArray<string>
  /** For an interrupted run: when it last wrote a file (its prompt or an answer), the last sign of life. */
  readonly lastWriteAt?: Date | undefined
}

/** One run directory as `listRuns` sees it. */
export interface RunSummary extends RunView {
  /** Whether `final.md` exists. */
  readonly hasFinal: boolean
  /** The start of `prompt.md`, at most `PROMPT_PREVIEW_CHARS` characters. */
  readonly promptPreview: string
}

export const PROMPT_PREVIEW_CHARS = 200

/** The largest run file read back: answers are capped at --max-response-bytes, prompts at --max-prompt-chars. */
const RUN_FILE_MAX_BYTES = 64 * 1024 * 1024
/** An attachment's copy: at most the largest --attach-max-bytes. */
const ATTACHMENT_MAX_BYTES = 1024 * 1024 * 1024

// A too deeply nested file is refused before the schema's recursive decoding meets it.
const decodeManifestText = Schema.decodeUnknown(Schema.parseJson(Schema.compose(ShallowJson, Manifest, { strict: false })))
/** A run's manifest; its id is the directory's name, whatever `id` the file says (it may have been edited). */
const decodeManifest = (runId: string) => (text: string) => Effect.map(decodeManifestText(text), (manifest) => ({ ...manifest, id: runId }))
const decodeOwner = Schema.decodeUnknown(Schema.parseJson(Schema.compose(ShallowJson, OwnerRecord, { strict: false })))

type Failure = { readonly _tag: string; readonly reason?: string; readonly message: string }
const isNotFound = (error: Failure) => error._tag === "SystemError" && error.reason === "NotFound"
const utf8 = new TextDecoder()

export const makeRunReader = (fs: FileSystem.FileSystem, path: Path.Path, outputDir: string) => {
  const d: RunsDir = { fs, path, outputDir }
  return {
    readRunFile: (runId: string, file: string) => readRunFile(d, runId, file),
    readAttachment: (runId: string, name: string) => readAttachment(d, runId, name),
    readManifest: (runId: string) => readManifest(d, runId),
    readRun: (runId: string) => readRun(d, runId),
    hasRun: (runId: string) => hasRun(d, runId),
    listRuns: (limit: number) => listRuns(d, limit)
  }
}

const rootFailure = (d: RunsDir) => (error: unknown) =>
  new StoreError({ path: d.outputDir, message: fsFailure(`cannot read the runs directory ${d.outputDir} (--output-dir)`, error) })

/** The runs directory's real path; undefined while it does not exist. */
const realRoot = (d: RunsDir) =>
  d.fs.realPath(d.outputDir).pipe(
    Effect.map((real): string | undefined => real),
    Effect.catchIf(isNotFound, () => Effect.succeed(undefined)),
    Effect.mapError(rootFailure(d))
  )

/** Whether `relative` (inside run `id`) is really there: no symlink on the way leads out of its place. */
const isInPlace = (d: RunsDir, root: string, id: string, relative: string) =>
  d.fs.realPath(d.path.join(d.outputDir, id, relative)).pipe(
    Effect.map((real) => real === d.path.join(root, id, relative)),
    Effect.orElseSucceed(() => false)
  )

const checkRunId = (runId: string, file: string) =>
  RUN_ID_PATTERN.test(runId)
    ? Effect.void
    : Effect.fail(new InvalidRunPath({ runId, file, message: `${JSON.stringify(runId)} is not a run id` }))

/** The real runs directory, when the run exists and is a real directory under it. */
const runRoot = (d: RunsDir, runId: string, file: string) =>
  Effect.gen(function*() {
    yield* checkRunId(runId, file)
    const root = yield* realRoot(d)
    if (root === undefined || !(yield* isInPlace(d, root, runId, "."))) {
      return yield* new RunFileNotFound({ runId, file, message: `no run ${runId} in ${d.outputDir}` })
    }
    return root
  })

/**
 * A file of a run, only if it is in place (opened once, not through a symlink, its real path its place under
 * the root); absent files are `None`. With `head`, the first `maxBytes` bytes of a longer file.
 */
const readInPlace = (
  d: RunsDir,
  root: string,
  runId: string,
  relative: string,
  maxBytes = RUN_FILE_MAX_BYTES,
  head = false
): Effect.Effect<Option.Option<Uint8Array>, InvalidRunPath | StoreError> =>
  readFileSafely(d.path.join(d.outputDir, runId, relative), { maxBytes, head, inside: [d.path.join(root, runId, relative)] }).pipe(
    Effect.map(Option.some),
    Effect.catchAll((e) => e.reason === "missing" ? Effect.succeed(Option.none<Uint8Array>()) : Effect.fail(notInPlace(runId, relative, e)))
  )

/** Why a run file that exists was not read: it leads elsewhere, is not a file, or could not be read. */
const notInPlace = (runId: string, relative: string, e: FileRefused): InvalidRunPath | StoreError => {
  switch (e.reason) {
    case "outside":
    case "not a regular file":
      return new InvalidRunPath({
        runId,
        file: relative,
        message: `${relative} of run ${runId} ${e.reason === "outside" ? "lies outside the runs directory" : "is not a regular file"}`
      })
    default:
      return new StoreError({ path: e.path, message: `cannot read ${e.message}` })
  }
}

const readTextInPlace = (d: RunsDir, root: string, runId: string, relative: string) =>
  Effect.map(readInPlace(d, root, runId, relative), Option.map((bytes) => utf8.decode(bytes)))

const readRunFile = Effect.fn("RunStore.readRunFile")(function*(d: RunsDir, runId: string, file: string) {
  yield* checkRunId(runId, file)
  if (!RUN_FILE_PATTERN.test(file)) {
    return yield* new InvalidRunPath({
      runId,
      file,
      message: `${
        JSON.stringify(file)
      } is not a file of a run (prompt.md, final.md, run.json, responses/NN-<model>.md, rankings/… or rounds/N/…)`
    })
  }
  const root = yield* runRoot(d, runId, file)
  const text = yield* readTextInPlace(d, root, runId, file)
  if (Option.isNone(text)) return yield* new RunFileNotFound({ runId, file, message: `run ${runId} has no ${file}` })
  return text.value
})

const readAttachment = Effect.fn("RunStore.readAttachment")(function*(d: RunsDir, runId: string, name: string) {
  const file = `${ATTACHMENTS_DIR}/${name}`
  yield* checkRunId(runId, file)
  if (!ATTACHMENT_NAME.test(name)) {
    return yield* new InvalidRunPath({ runId, file, message: `${JSON.stringify(name)} is not the name of an attachment's copy` })
  }
  const root = yield* runRoot(d, runId, file)
  const bytes = yield* readInPlace(d, root, runId, file, ATTACHMENT_MAX_BYTES)
  if (Option.isNone(bytes)) return yield* new RunFileNotFound({ runId, file, message: `run ${runId} has no ${file}` })
  return bytes.value
})

const readManifest = (d: RunsDir, runId: string) =>
  readRunFile(d, runId, "run.json").pipe(
    Effect.flatMap((text) =>
      decodeManifest(runId)(text).pipe(
        Effect.mapError((e) =>
          new StoreError({
            path: d.path.join(d.outputDir, runId, "run.json"),
            message: `run ${runId}: run.json is not a manifest: ${e.message}`
          })
        )
      )
    )
  )

/** A run file decoded, or undefined: a damaged or misplaced file must not hide the run (nor the other runs). */
const readOptional = <A>(d: RunsDir, root: string, runId: string, relative: string, decode: (text: string) => Effect.Effect<A, unknown>) =>
  readTextInPlace(d, root, runId, relative).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.succeed(undefined), onSome: decode })),
    Effect.orElseSucceed(() => undefined)
  )

/** The run's state, owner and answers; a run whose writer is gone has its temporary files swept. */
const viewOf = (d: RunsDir, root: string, runId: string) =>
  Effect.gen(function*() {
    const dir = d.path.join(d.outputDir, runId)
    const manifest = yield* readOptional(d, root, runId, "run.json", decodeManifest(runId))
    const owner = manifest ? undefined : yield* readOptional(d, root, runId, OWNER_FILE, decodeOwner)
    const host = thisHost()
    const probe = owner !== undefined && owner.host === host ? yield* probePid(d.fs, owner.pid) : undefined
    const state = decideRunState({
      hasManifest: manifest !== undefined,
      owner,
      createdAtMs: runIdTime(runId) ?? 0,
      nowMs: yield* Clock.currentTimeMillis,
      host,
      probe
    })
    if (state !== "running") yield* sweep(d, dir, ["responses", ATTACHMENTS_DIR, "rankings"])
    const answers = yield* answersIn(d, dir)
    const lastWriteAt = state === "interrupted" ? yield* newestOf(d, dir, ["prompt.md", ...answers]) : undefined
    const view: RunView = { id: runId, dir, state, manifest, owner, answers, lastWriteAt }
    return view
  })

const readRun = Effect.fn("RunStore.readRun")(function*(d: RunsDir, runId: string) {
  const root = yield* runRoot(d, runId, ".")
  return yield* viewOf(d, root, runId)
})

/** Whether the run is there (its directory, in place under the root), none of its files read. */
const hasRun = (d: RunsDir, runId: string) =>
  runRoot(d, runId, ".").pipe(
    Effect.as(true),
    Effect.catchTags({ InvalidRunPath: () => Effect.succeed(false), RunFileNotFound: () => Effect.succeed(false) })
  )

const listRuns = Effect.fn("RunStore.listRuns")(function*(d: RunsDir, limit: number) {
  const root = yield* realRoot(d)
  if (root === undefined) return []
  const names = yield* d.fs.readDirectory(d.outputDir).pipe(Effect.mapError(rootFailure(d)))
  const ids = names.filter((name) => RUN_ID_PATTERN.test(name)).sort().reverse().slice(0, Math.max(0, limit))
  const runs = yield* Effect.forEach(ids, (id) => summaryOf(d, root, id), { concurrency: 8 })
  return runs.filter((r): r is RunSummary => r !== undefined)
})

/** One run as listed; a symlinked "run" leads out of the runs directory and is not listed. */
const summaryOf = (d: RunsDir, root: string, id: string) =>
  Effect.gen(function*() {
    if (!(yield* isInPlace(d, root, id, "."))) return undefined
    const view = yield* viewOf(d, root, id)
    const hasFinal = yield* isInPlace(d, root, id, "final.md")
    const promptPreview = yield* readInPlace(d, root, id, "prompt.md", PROMPT_PREVIEW_CHARS * 4, true).pipe(
      Effect.map(Option.match({
        onNone: () => "",
        // The head may end inside a character: its broken tail is dropped, not shown as U+FFFD.
        onSome: (bytes) => utf8.decode(bytes).replace(/\uFFFD+$/, "").slice(0, PROMPT_PREVIEW_CHARS)
      })),
      Effect.orElseSucceed(() => "")
    )
    const summary: RunSummary = { ...view, hasFinal, promptPreview }
    return summary
  })
