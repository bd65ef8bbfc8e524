import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
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

export interface RunStoreShape {
  /** Makes a fresh run directory (never reused, also across processes) and writes `prompt.md` into it. */
  readonly createRun: (prompt: string) => Effect.Effect<RunHandle, StoreError>
  /** Writes a candidate's answer the moment it arrives; returns the path relative to the run directory. */
  readonly writeResponse: (run: RunHandle, index: number, model: string, content: string) => Effect.Effect<string, StoreError>
  readonly writeFinal: (run: RunHandle, content: string) => Effect.Effect<string, StoreError>
  readonly writeManifest: (run: RunHandle, manifest: Manifest) => Effect.Effect<string, StoreError>
  /** The root under which run directories are made. */
  readonly root: string
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

export const makeRunStore = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const { outputDir } = yield* Settings
  // Ids from one process must sort in creation order even within one millisecond.
  let lastMs = 0

  const fail = (target: string) => (error: { readonly message: string }) =>
    new StoreError({ path: target, message: `cannot write ${target}: ${error.message}` })

  /** Temporary sibling then rename: a reader (or a crash) never sees half a file. */
  const writeAtomic = Effect.fn("RunStore.writeAtomic")(function*(target: string, data: string) {
    const temp = path.join(path.dirname(target), `.${path.basename(target)}.${crypto.randomBytes(6).toString("hex")}.tmp`)
    yield* fs.writeFileString(temp, data).pipe(
      Effect.zipRight(fs.rename(temp, target)),
      Effect.onError(() => fs.remove(temp).pipe(Effect.ignore)),
      Effect.mapError(fail(target))
    )
  })

  const createRun = Effect.fn("RunStore.createRun")(function*(prompt: string) {
    yield* fs.makeDirectory(outputDir, { recursive: true }).pipe(Effect.mapError(fail(outputDir)))
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
        Effect.catchAll((e) => (e._tag === "SystemError" && e.reason === "AlreadyExists" && tries < 5 ? Effect.succeed(false) : Effect.fail(fail(dir)(e))))
      )
      if (made) handle = { id, dir, createdAt }
    }
    yield* fs.makeDirectory(path.join(handle.dir, "responses")).pipe(Effect.mapError(fail(handle.dir)))
    yield* writeAtomic(path.join(handle.dir, "prompt.md"), prompt)
    return handle
  })

  const writeRelative = (run: RunHandle, relative: string, data: string) =>
    writeAtomic(path.join(run.dir, relative), data).pipe(Effect.as(relative))

  return RunStore.of({
    root: outputDir,
    createRun,
    writeResponse: (run, index, model, content) => writeRelative(run, responseFileName(index, model), content),
    writeFinal: (run, content) => writeRelative(run, "final.md", content),
    writeManifest: (run, manifest) => writeRelative(run, "run.json", `${JSON.stringify(encodeManifest(manifest), null, 2)}\n`)
  })
})

export const layerRunStore: Layer.Layer<RunStore, never, Settings | FileSystem.FileSystem | Path.Path> = Layer.effect(
  RunStore,
  makeRunStore
)
