import type { FileSystem, Path } from "@effect/platform"
import { Effect, Option } from "effect"

// What a reader learns from a run's folders rather than from its files' contents: the answers on disk, when the
// run last wrote, and the temporary files a writer that is gone left behind.

/** The runs directory a reader reads, and the platform it reads it with. */
export interface RunsDir {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly outputDir: string
}

const ANSWER_NAME = /^\d{2,}-[A-Za-z0-9._-]+\.md$/
/** Temporary siblings of atomic writes: `.<file>.<random>.tmp`. */
const TEMP_NAME = /^\..+\.tmp$/

const namesIn = (d: RunsDir, dir: string) => d.fs.readDirectory(dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))

/**
 * Temporary files whose writer is gone (the run finished or was interrupted): removed, quietly, from the run
 * directory, the `folders` named and every round's folder. Only the folders the run has are read: reading one it
 * lacks fails, and each failure builds an error with its stack (most runs have no rounds, rankings or attachments).
 */
export const sweep = (d: RunsDir, dir: string, folders: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const names = yield* namesIn(d, dir)
    const has = (name: string) => names.includes(name)
    const rounds = has("rounds") ? yield* namesIn(d, d.path.join(dir, "rounds")) : []
    yield* removeTemps(d, dir, names)
    yield* Effect.forEach(
      [...folders.filter(has).map((sub) => d.path.join(dir, sub)), ...rounds.map((round) => d.path.join(dir, "rounds", round))],
      (folder) => Effect.flatMap(namesIn(d, folder), (inside) => removeTemps(d, folder, inside)),
      { discard: true }
    )
  })

const removeTemps = (d: RunsDir, folder: string, names: ReadonlyArray<string>) =>
  Effect.forEach(names.filter((n) => TEMP_NAME.test(n)), (n) => d.fs.remove(d.path.join(folder, n)).pipe(Effect.ignore), {
    discard: true
  })

/** The newest modification time among these files of a run. */
export const newestOf = (d: RunsDir, dir: string, files: ReadonlyArray<string>) =>
  Effect.forEach(
    files,
    (file) =>
      d.fs.stat(d.path.join(dir, file)).pipe(Effect.map((info) => Option.getOrUndefined(info.mtime)), Effect.orElseSucceed(() => undefined))
  ).pipe(
    Effect.map((times) =>
      times.reduce<Date | undefined>((newest, t) => (t !== undefined && (newest === undefined || t > newest) ? t : newest), undefined)
    )
  )

/** The answers on disk (`responses/NN-<slug>.md` and `.partial.md`), sorted. */
export const answersIn = (d: RunsDir, dir: string) =>
  Effect.map(
    namesIn(d, d.path.join(dir, "responses")),
    (names): ReadonlyArray<string> => names.filter((n) => ANSWER_NAME.test(n)).map((n) => `responses/${n}`).sort()
  )
