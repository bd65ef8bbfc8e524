import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Option, Schema, Stream } from "effect"
import * as crypto from "node:crypto"
import { StoreError } from "../domain/errors.js"
import { Manifest } from "../domain/manifest.js"
import { responseFileName } from "../domain/model.js"
import { Settings } from "./Settings.js"

export interface RunHandle {
  readonly id: string
  /** Absolute path of the run directory. */
  readonly dir: string
  readonly createdAt: Date
}

/** A run id as `createRun` makes them: `YYYYMMDD-HHMMSS-mmm-<8 hex>`. */
export const RUN_ID_PATTERN = /^\d{8}-\d{6}-\d{3}-[0-9a-f]{8}$/

/**
 * The files of a run that may be read back, relative to the run directory: exactly the run layout.
 * No `..`, no absolute path and no other directory can match, so a reader cannot leave the run.
 */
export const RUN_FILE_PATTERN = /^(?:prompt\.md|final\.md|run\.json|responses\/\d{2,}-[A-Za-z0-9._-]+\.md)$/

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

/** One run directory as `listRuns` sees it. */
export interface RunSummary {
  readonly id: string
  /** Absolute path of the run directory. */
  readonly dir: string
  /** The manifest; absent while the run is still going (or when `run.json` cannot be read). */
  readonly manifest: Manifest | undefined
  /** Whether `final.md` exists. */
  readonly hasFinal: boolean
  /** The start of `prompt.md`, at most `PROMPT_PREVIEW_CHARS` characters. */
  readonly promptPreview: string
}

export const PROMPT_PREVIEW_CHARS = 200

export interface RunStoreShape {
  /** Makes a fresh run directory (never reused, also across processes) with its `responses/` folder. */
  readonly createRun: () => Effect.Effect<RunHandle, StoreError>
  /** Writes `prompt.md`. */
  readonly writePrompt: (run: RunHandle, prompt: string) => Effect.Effect<string, StoreError>
  /** Writes a candidate's answer; returns the path relative to the run directory. */
  readonly writeResponse: (
    run: RunHandle,
    index: number,
    model: string,
    content: string,
    /** `partial`: the text of an answer that broke off, as `NN-<slug>.partial.md`. */
    kind?: "answer" | "partial"
  ) => Effect.Effect<string, StoreError>
  /**
   * Writes `final.md` and the manifest together: both are written at once, then `final.md` is renamed
   * into place before `run.json`, so a manifest that names the final answer never lands without it.
   */
  readonly writeFinal: (run: RunHandle, content: string, manifest: Manifest) => Effect.Effect<string, StoreError>
  /** Writes `run.json`, for a run that ends without a final answer. */
  readonly writeManifest: (run: RunHandle, manifest: Manifest) => Effect.Effect<string, StoreError>
  /** The root under which run directories are made. */
  readonly root: string
  /** The newest runs under the root, newest first, at most `limit` of them; none when the root does not exist yet. */
  readonly listRuns: (limit: number) => Effect.Effect<ReadonlyArray<RunSummary>, StoreError>
  /**
   * One file of a run, as text. `file` is relative to the run directory and must be one of the run
   * layout's files (`prompt.md`, `final.md`, `run.json`, `responses/NN-<slug>.md`, `responses/NN-<slug>.partial.md`).
   */
  readonly readRunFile: (runId: string, file: string) => Effect.Effect<string, InvalidRunPath | RunFileNotFound | StoreError>
  /** A run's manifest, decoded; a `run.json` that is not one is a StoreError. */
  readonly readManifest: (runId: string) => Effect.Effect<Manifest, InvalidRunPath | RunFileNotFound | StoreError>
}

/** The run directories on disk: one per run, every file written atomically. */
export class RunStore extends Context.Tag("parallel-llm/RunStore")<RunStore, RunStoreShape>() {}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** `YYYYMMDD-HHMMSS-mmm-<random>`: sorts by creation time, readable, and safe on every file system. */
const runIdFor = (date: Date): string =>
  `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
  `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}-` +
  `${pad(date.getUTCMilliseconds(), 3)}-${crypto.randomBytes(4).toString("hex")}`

const encodeManifest = Schema.encodeSync(Manifest)
const decodeManifest = Schema.decodeUnknown(Schema.parseJson(Manifest))
const manifestText = (manifest: Manifest) => `${JSON.stringify(encodeManifest(manifest), null, 2)}\n`

export const makeRunStore = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { outputDir } = yield* Settings
  // Ids from one process must sort in creation order even within one millisecond.
  let lastMs = 0

  // The root is made once per process (and again if it disappears), not before every run.
  let rootMade = false

  const fail = (target: string) => (error: { readonly message: string }) =>
    new StoreError({ path: target, message: `cannot write ${target}: ${error.message}` })

  const tempFor = (target: string) =>
    path.join(path.dirname(target), `.${path.basename(target)}.${crypto.randomBytes(6).toString("hex")}.tmp`)
  const removeAll = (files: ReadonlyArray<string>) => Effect.forEach(files, (file) => fs.remove(file).pipe(Effect.ignore), { discard: true })

  /** Temporary sibling then rename: a reader (or a crash) never sees half a file. */
  const writeAtomic = (target: string, data: string) => {
    const temp = tempFor(target)
    return fs.writeFileString(temp, data).pipe(
      Effect.zipRight(fs.rename(temp, target)),
      Effect.onError(() => removeAll([temp])),
      Effect.mapError(fail(target))
    )
  }

  const isNotFound = (error: { readonly _tag: string; readonly reason?: string }) =>
    error._tag === "SystemError" && error.reason === "NotFound"

  const makeRoot = fs.makeDirectory(outputDir, { recursive: true }).pipe(
    Effect.mapError(fail(outputDir)),
    Effect.tap(() => Effect.sync(() => (rootMade = true)))
  )

  const createRun = Effect.fn("RunStore.createRun")(function*() {
    if (!rootMade) yield* makeRoot
    // mkdir without `recursive` fails if the directory exists: that makes ids unique across processes.
    let handle: RunHandle | undefined
    for (let tries = 0; handle === undefined; tries++) {
      const now = Date.now()
      lastMs = Math.max(now, lastMs + 1)
      const createdAt = new Date(lastMs)
      const id = runIdFor(createdAt)
      const dir = path.join(outputDir, id)
      const made = yield* fs.makeDirectory(dir).pipe(
        Effect.as(true),
        Effect.catchAll((e) => {
          if (e._tag === "SystemError" && e.reason === "AlreadyExists" && tries < 5) return Effect.succeed(false)
          // The root was removed since this process made it: make it again, once.
          if (isNotFound(e) && tries === 0) return Effect.as(makeRoot, false)
          return Effect.fail(fail(dir)(e))
        })
      )
      if (made) handle = { id, dir, createdAt }
    }
    yield* fs.makeDirectory(path.join(handle.dir, "responses")).pipe(Effect.mapError(fail(handle.dir)))
    return handle
  })

  const writeRelative = (run: RunHandle, relative: string, data: string) =>
    writeAtomic(path.join(run.dir, relative), data).pipe(Effect.as(relative))

  /** Both files written at once under temporary names, then renamed in order: `final.md` first. */
  const writeFinal = (run: RunHandle, content: string, manifest: Manifest) => {
    const final = path.join(run.dir, "final.md")
    const json = path.join(run.dir, "run.json")
    const [finalTemp, jsonTemp] = [tempFor(final), tempFor(json)]
    return Effect.all([
      fs.writeFileString(finalTemp, content).pipe(Effect.mapError(fail(final))),
      fs.writeFileString(jsonTemp, manifestText(manifest)).pipe(Effect.mapError(fail(json)))
    ], { concurrency: 2, discard: true }).pipe(
      Effect.zipRight(fs.rename(finalTemp, final).pipe(Effect.mapError(fail(final)))),
      Effect.zipRight(fs.rename(jsonTemp, json).pipe(Effect.mapError(fail(json)))),
      // A temporary file already renamed is no longer there: removing it fails, and is ignored.
      Effect.onError(() => removeAll([finalTemp, jsonTemp])),
      Effect.as("final.md")
    )
  }

  const readFailure = (target: string) => (error: { readonly message: string }) =>
    new StoreError({ path: target, message: `cannot read ${target}: ${error.message}` })

  const listRuns = Effect.fn("RunStore.listRuns")(function*(limit: number) {
    const names = yield* fs.readDirectory(outputDir).pipe(
      Effect.catchIf(isNotFound, () => Effect.succeed<Array<string>>([])),
      Effect.mapError(readFailure(outputDir))
    )
    const ids = names.filter((name) => RUN_ID_PATTERN.test(name)).sort().reverse().slice(0, Math.max(0, limit))
    return yield* Effect.forEach(ids, (id) =>
      Effect.gen(function*() {
        const dir = path.join(outputDir, id)
        // A run in flight has no manifest yet, and a damaged file must not hide the other runs.
        const manifest = yield* fs.readFileString(path.join(dir, "run.json")).pipe(
          Effect.flatMap(decodeManifest),
          Effect.option,
          Effect.map(Option.getOrUndefined)
        )
        const hasFinal = yield* fs.exists(path.join(dir, "final.md")).pipe(Effect.orElseSucceed(() => false))
        const promptPreview = yield* fs.stream(path.join(dir, "prompt.md"), { bytesToRead: PROMPT_PREVIEW_CHARS * 4 }).pipe(
          Stream.decodeText(),
          Stream.mkString,
          Effect.map((text) => text.replace(/\uFFFD+$/, "").slice(0, PROMPT_PREVIEW_CHARS)),
          Effect.orElseSucceed(() => "")
        )
        return { id, dir, manifest, hasFinal, promptPreview } satisfies RunSummary
      }), { concurrency: 8 })
  })

  const readRunFile = Effect.fn("RunStore.readRunFile")(function*(runId: string, file: string) {
    if (!RUN_ID_PATTERN.test(runId)) {
      return yield* new InvalidRunPath({ runId, file, message: `${JSON.stringify(runId)} is not a run id` })
    }
    if (!RUN_FILE_PATTERN.test(file)) {
      return yield* new InvalidRunPath({
        runId,
        file,
        message: `${JSON.stringify(file)} is not a file of a run (prompt.md, final.md, run.json or responses/NN-<model>.md)`
      })
    }
    const dir = path.join(outputDir, runId)
    const target = path.join(dir, file)
    // The patterns already exclude it; checked again so that a future pattern change cannot open the file system.
    if (!target.startsWith(dir + path.sep)) {
      return yield* new InvalidRunPath({ runId, file, message: `${JSON.stringify(file)} is outside the run directory` })
    }
    return yield* fs.readFileString(target).pipe(
      Effect.catchIf(isNotFound, () =>
        fs.exists(dir).pipe(
          Effect.orElseSucceed(() => false),
          Effect.flatMap((runExists) =>
            new RunFileNotFound({
              runId,
              file,
              message: runExists ? `run ${runId} has no ${file}` : `no run ${runId} in ${outputDir}`
            })
          )
        )),
      Effect.mapError((e) => (e._tag === "RunFileNotFound" ? e : readFailure(target)(e)))
    )
  })

  const readManifest = (runId: string) =>
    readRunFile(runId, "run.json").pipe(
      Effect.flatMap((text) =>
        decodeManifest(text).pipe(
          Effect.mapError((e) =>
            new StoreError({ path: path.join(outputDir, runId, "run.json"), message: `run ${runId}: run.json is not a manifest: ${e.message}` })
          )
        )
      )
    )

  return RunStore.of({
    root: outputDir,
    listRuns,
    readRunFile,
    readManifest,
    createRun,
    writePrompt: (run, prompt) => writeRelative(run, "prompt.md", prompt),
    writeResponse: (run, index, model, content, kind = "answer") =>
      writeRelative(run, responseFileName(index, model, kind === "partial" ? ".partial.md" : ".md"), content),
    writeFinal,
    writeManifest: (run, manifest) => writeRelative(run, "run.json", manifestText(manifest))
  })
})

export const layerRunStore: Layer.Layer<RunStore, never, Settings | FileSystem.FileSystem | Path.Path> = Layer.effect(
  RunStore,
  makeRunStore
)
