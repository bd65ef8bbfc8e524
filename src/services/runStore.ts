import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, Option, type Redacted, Schema } from "effect"
import * as crypto from "node:crypto"
import { fsFailure, StoreError } from "../domain/errors.js"
import { makeDirectories } from "../domain/makeDirectories.js"
import { type AttachmentRecord, Manifest, type RunSettings } from "../domain/manifest.js"
import { responseFileName } from "../domain/model.js"
import { OWNER_FILE, OwnerRecord } from "../domain/runState.js"
import { thisHost, thisProcessStartedAt } from "./processProbe.js"
import { ATTACHMENTS_DIR, type InvalidRunPath, makeRunReader, type RunFileNotFound, type RunSummary, type RunView } from "./runReader.js"
import { Settings } from "./settings.js"
import { makeWriter, PRIVATE_DIR, writeAtomic, type Writer } from "./storeWriter.js"

export interface RunHandle {
  readonly id: string
  /** Absolute path of the run directory. */
  readonly dir: string
  readonly createdAt: Date
}

/** What the store does; `RunStore` is this, as a service. */
interface RunStoreShape {
  /**
   * Makes a fresh run directory (never reused, also across processes) with its `responses/` folder and
   * its owner record (this process, and the run's settings), which stays until the manifest lands.
   */
  readonly createRun: (
    settings?: RunSettings,
    attachments?: ReadonlyArray<AttachmentRecord>,
    parent?: string
  ) => Effect.Effect<RunHandle, StoreError>
  /**
   * `createRun` in two halves, for a run that sends its first calls before its owner record lands: the
   * directory with its `responses/` folder, then `writeOwner`. Until the owner record is there, readers
   * see the run as running (an unowned run is interrupted only once it is stale).
   */
  readonly makeRunDir: () => Effect.Effect<RunHandle, StoreError>
  readonly writeOwner: (
    run: RunHandle,
    settings?: RunSettings,
    attachments?: ReadonlyArray<AttachmentRecord>,
    parent?: string,
    strategy?: string
  ) => Effect.Effect<string, StoreError>
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
  /** Writes a file of a strategy step (`rankings/NN-<slug>.md`, `rounds/N/NN-<slug>.md`), its folder made if needed. */
  readonly writeStepFile: (run: RunHandle, relative: string, content: string) => Effect.Effect<string, StoreError>
  /**
   * Writes `final.md` and the manifest together: both are written at once, then `final.md` is renamed
   * into place before `run.json`, so a manifest that names the final answer never lands without it.
   */
  readonly writeFinal: (run: RunHandle, content: string, manifest: Manifest) => Effect.Effect<string, StoreError>
  /** Writes a copy of an attached file as `attachments/<name>`; returns that path (relative to the run directory). */
  readonly writeAttachment: (run: RunHandle, name: string, bytes: Uint8Array) => Effect.Effect<string, StoreError>
  /** An attached file's copy, `attachments/<name>` of a run, as bytes. */
  readonly readAttachment: (runId: string, name: string) => Effect.Effect<Uint8Array, InvalidRunPath | RunFileNotFound | StoreError>
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
  /**
   * One run: its state (finished, running, interrupted), manifest or owner record, and the answers on disk.
   * Temporary files of a writer that is gone are removed on the way.
   */
  readonly readRun: (runId: string) => Effect.Effect<RunView, InvalidRunPath | RunFileNotFound | StoreError>
  /** Whether a run is there, none of its files read (a malformed id is not one). */
  readonly hasRun: (runId: string) => Effect.Effect<boolean, StoreError>
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/**
 * `YYYYMMDD-HHMMSS-mmm-<random>`: sorts by creation time, readable, and safe on every file system. The random part
 * is a v4 UUID's first 8 hex digits (32 random bits), drawn from Node's cached entropy rather than a call to the
 * OS per run as `randomBytes` makes.
 */
const runIdFor = (date: Date): string =>
  `${date.getUTCFullYear()}${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}-` +
  `${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}-` +
  `${pad(date.getUTCMilliseconds(), 3)}-${crypto.randomUUID().slice(0, 8)}`

const encodeManifest = Schema.encodeSync(Manifest)
const manifestText = (manifest: Manifest) => `${JSON.stringify(encodeManifest(manifest), null, 2)}\n`
const encodeOwner = Schema.encodeSync(OwnerRecord)

/** Makes run directories under `outputDir`, with ids unique across processes and in creation order within one. */
const makeRunDirs = (w: Writer, outputDir: string) => {
  // The root is made once per process (and again if it disappears), not before every run; ids from one
  // process must sort in creation order even within one millisecond.
  const state = { rootMade: false, lastMs: 0 }
  const makeRoot = makeDirectories(w.fs, outputDir, PRIVATE_DIR.mode).pipe(
    Effect.mapError((e) =>
      new StoreError({ path: outputDir, message: fsFailure(`cannot create the output directory ${outputDir} (--output-dir)`, e) })
    ),
    Effect.tap(() => Effect.sync(() => (state.rootMade = true)))
  )
  // The run directory and its `responses/`; false when the id is taken, or the root was gone and is made again.
  // mkdir without `recursive` fails if the directory exists: that makes ids unique across processes.
  const makeRunDir = (dir: string, tries: number) =>
    Effect.async<boolean, StoreError>((resume) =>
      w.disk.mkdir(dir, PRIVATE_DIR, (error) => {
        if (error === null) {
          return w.disk.mkdir(w.path.join(dir, "responses"), PRIVATE_DIR, (inner) =>
            resume(inner === null ? Effect.succeed(true) : Effect.fail(w.fail(dir)(inner))))
        }
        if (error.code === "EEXIST" && tries < 5) {
          return resume(Effect.succeed(false))
        }
        // The root was removed since this process made it: make it again, once.
        if (error.code === "ENOENT" && tries === 0) {
          return resume(Effect.as(makeRoot, false))
        }
        resume(Effect.fail(w.fail(dir)(error)))
      })
    )
  return Effect.fnUntraced(function*() {
    if (!state.rootMade) yield* makeRoot
    for (let tries = 0;; tries++) {
      state.lastMs = Math.max(Date.now(), state.lastMs + 1)
      const createdAt = new Date(state.lastMs)
      const id = runIdFor(createdAt)
      const dir = w.path.join(outputDir, id)
      if (yield* makeRunDir(dir, tries)) return { id, dir, createdAt } satisfies RunHandle
    }
  })
}

const writeOwner = (
  w: Writer,
  run: RunHandle,
  settings?: RunSettings,
  attachments?: ReadonlyArray<AttachmentRecord>,
  parent?: string,
  strategy?: string
) => {
  const owner: OwnerRecord = {
    pid: process.pid,
    host: thisHost(),
    processStartedAt: thisProcessStartedAt().toISOString(),
    createdAt: run.createdAt.toISOString(),
    ...(settings ? { settings } : {}),
    ...(attachments !== undefined && attachments.length > 0 ? { attachments } : {}),
    ...(parent !== undefined ? { parent } : {}),
    ...(strategy !== undefined ? { strategy } : {})
  }
  const text = w.redact(`${JSON.stringify(encodeOwner(owner), null, 2)}\n`)
  return Effect.as(writeAtomic(w, [[ownerPath(w, run), text]]), OWNER_FILE)
}

/** The owner record of a run, and its manifest as written (the key redacted). */
const ownerPath = (w: Writer, run: RunHandle) => w.path.join(run.dir, OWNER_FILE)
const manifestEntry = (w: Writer, run: RunHandle, manifest: Manifest): readonly [string, string] => [
  w.path.join(run.dir, "run.json"),
  w.redact(manifestText(manifest))
]

const writeRelative = (w: Writer, run: RunHandle, relative: string, data: string) =>
  Effect.as(writeAtomic(w, [[w.path.join(run.dir, relative), data]]), relative)

/**
 * `final.md` and `run.json` written at once under temporary names, then renamed in that order: a manifest that
 * names the final answer never lands without it. Once the manifest is there the run is finished: the owner
 * record has served its purpose and goes.
 */
const writeFinal = (w: Writer, run: RunHandle, content: string, manifest: Manifest) =>
  Effect.as(
    writeAtomic(w, [[w.path.join(run.dir, "final.md"), content], manifestEntry(w, run, manifest)], ownerPath(w, run)),
    "final.md"
  )

/** `run.json` alone, for a run that ends without a final answer; the owner record goes, as with writeFinal. */
const writeManifest = (w: Writer, run: RunHandle, manifest: Manifest) =>
  Effect.as(writeAtomic(w, [manifestEntry(w, run, manifest)], ownerPath(w, run)), "run.json")

const writeAttachment = (w: Writer, run: RunHandle, name: string, bytes: Uint8Array) =>
  makeDirectories(w.fs, w.path.join(run.dir, ATTACHMENTS_DIR), PRIVATE_DIR.mode).pipe(
    Effect.mapError(w.fail(w.path.join(run.dir, ATTACHMENTS_DIR))),
    Effect.zipRight(writeAtomic(w, [[w.path.join(run.dir, ATTACHMENTS_DIR, name), bytes]])),
    Effect.as(`${ATTACHMENTS_DIR}/${name}`)
  )

/** The store of run directories under `outputDir`; `apiKey` is what no file it writes may hold. */
const storeAt = Effect.fnUntraced(function*(apiKey: Option.Option<Redacted.Redacted>, outputDir: string) {
  const w = yield* makeWriter(apiKey)
  const makeRunDir = makeRunDirs(w, outputDir)
  const store: RunStoreShape = {
    root: outputDir,
    ...makeRunReader(w.fs, w.path, outputDir),
    createRun: (settings, attachments, parent) => Effect.tap(makeRunDir(), (run) => writeOwner(w, run, settings, attachments, parent)),
    makeRunDir,
    writeOwner: (run, settings, attachments, parent, strategy) => writeOwner(w, run, settings, attachments, parent, strategy),
    writePrompt: (run, prompt) => writeRelative(w, run, "prompt.md", prompt),
    writeResponse: (run, index, model, content, kind = "answer") =>
      writeRelative(w, run, responseFileName(index, model, kind === "partial" ? ".partial.md" : ".md"), content),
    writeStepFile: (run, relative, content) =>
      makeDirectories(w.fs, w.path.join(run.dir, w.path.dirname(relative)), PRIVATE_DIR.mode).pipe(
        Effect.mapError(w.fail(w.path.join(run.dir, relative))),
        Effect.zipRight(writeRelative(w, run, relative, content))
      ),
    writeFinal: (run, content, manifest) => writeFinal(w, run, content, manifest),
    writeAttachment: (run, name, bytes) => writeAttachment(w, run, name, bytes),
    writeManifest: (run, manifest) => writeManifest(w, run, manifest)
  }
  return store
})

/** The run directories on disk: one per run, every file written atomically, under the settings' `outputDir`. */
export class RunStore extends Effect.Service<RunStore>()("parallel-llm/RunStore", {
  effect: Effect.flatMap(Settings, ({ apiKey, outputDir }) => storeAt(apiKey, outputDir)),
  dependencies: [NodeFileSystem.layer, NodePath.layer]
}) {
  /** The store on disk under `outputDir`, no key to redact. The in-memory double is `makeTestRunStore` in test/support. */
  static readonly Test = (outputDir: string): Layer.Layer<RunStore> =>
    Layer.effect(this, Effect.map(storeAt(Option.none(), outputDir), (store) => this.make(store))).pipe(
      Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))
    )
}
