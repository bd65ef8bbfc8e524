import { Context } from "effect"
import * as fs from "node:fs"
import type { PermitLine } from "./permitLine.js"

// The run store's few file operations, as Node's callbacks: an atomic write is one `Effect.async` around its steps
// (write the temporary file, rename it) rather than an effect per step through the platform `FileSystem`, whose
// every call makes an AbortSignal and encodes a string to bytes (bench/README.md, the eighth session).

/** A Node callback: the step's error, or none. */
export type DiskDone = (error: NodeJS.ErrnoException | null) => void

/** What the run store does to the disk when it writes: Node's `fs` functions of the same names. */
export interface StoreDiskShape {
  readonly writeFile: (file: string, data: string | Uint8Array, options: { readonly mode: number }, done: DiskDone) => void
  readonly rename: (from: string, to: string, done: DiskDone) => void
  readonly unlink: (file: string, done: DiskDone) => void
  /** One directory, not its parents. */
  readonly mkdir: (dir: string, options: { readonly mode: number }, done: DiskDone) => void
}

/**
 * The disk the run store writes to: Node's own by default; a test hands in one that fails as a full disk does, or
 * counts the writes in flight (`Layer.succeed(StoreDisk, …)`, read once when the store is made).
 */
export class StoreDisk extends Context.Reference<StoreDisk>()("parallel-llm/StoreDisk", {
  defaultValue: (): StoreDiskShape => ({
    writeFile: (file, data, options, done) => fs.writeFile(file, data, options, done),
    rename: fs.rename,
    unlink: fs.unlink,
    mkdir: (dir, options, done) => fs.mkdir(dir, options, (error) => done(error))
  })
}) {}

/** A file to write atomically: its contents go to `temp`, which is then renamed onto `target`. */
export interface PendingFile {
  readonly target: string
  readonly temp: string
  readonly data: string | Uint8Array
}

/** The first of the files (in their order) that could not be written, and why. */
export interface WriteFailure {
  readonly target: string
  readonly error: unknown
}

/** `step` of Node's API, a synchronous throw (a path Node refuses) reported as the callback's error. */
const guarded = (step: (done: DiskDone) => void, done: DiskDone) => {
  try {
    step(done)
  } catch (error) {
    done(error instanceof Error ? error : new Error(String(error)))
  }
}

/**
 * Writes the files at once under their temporary names, each holding a permit of the gate, then renames them in
 * their order (a reader, or a crash, never sees half a file; a later file never lands without an earlier one),
 * then removes `thenRemove` (its failure ignored). A failure removes the temporary files still there and reports
 * the first file that failed. Returns the cancel: files not yet started are not written, those being written are
 * removed once written, and `settled` is called once nothing is in flight.
 */
export const writeAtomically = (
  disk: StoreDiskShape,
  gate: PermitLine,
  files: ReadonlyArray<PendingFile>,
  mode: number,
  thenRemove: string | undefined,
  done: (failure: WriteFailure | undefined) => void
): (settled: () => void) => void => {
  const errors: Array<unknown> = files.map(() => undefined)
  // Only a write that started can have left a temporary file.
  const started: Array<boolean> = files.map(() => false)
  const starts = files.map((file, i) => () =>
    guarded((written) => {
      started[i] = true
      disk.writeFile(file.temp, file.data, { mode }, written)
    }, (error) => {
      gate.leave()
      errors[i] = error ?? undefined
      if (--writing === 0) afterWrites()
    })
  )
  // Once none is left (every write ended): renaming, or removing what was written after a failure or a cancel.
  let writing = files.length
  let cancelled: (() => void) | undefined
  const finish = (failure: WriteFailure | undefined) => (cancelled === undefined ? done(failure) : cancelled())
  const firstFailure = (): WriteFailure | undefined => {
    const at = errors.findIndex((e) => e !== undefined)
    return at === -1 ? undefined : { target: files[at]?.target ?? "", error: errors[at] }
  }
  // A temporary file already renamed, or never made, is not there: removing it fails, and is ignored.
  const removeTemps = (from: number, then: () => void) => {
    const temps = files.slice(from).filter((_, i) => started[from + i])
    let left = temps.length
    if (left === 0) return then()
    for (const file of temps) guarded((removed) => disk.unlink(file.temp, removed), () => --left === 0 && then())
  }
  const renameFrom = (i: number): void => {
    const file = files[i]
    if (file === undefined) {
      if (thenRemove === undefined) return finish(undefined)
      return guarded((removed) => disk.unlink(thenRemove, removed), () => finish(undefined))
    }
    guarded((renamed) => disk.rename(file.temp, file.target, renamed), (error) => {
      if (error === null) return renameFrom(i + 1)
      removeTemps(i, () => finish({ target: file.target, error }))
    })
  }
  const afterWrites = () => {
    const failure = firstFailure()
    if (failure !== undefined || cancelled !== undefined) return removeTemps(0, () => finish(failure))
    renameFrom(0)
  }
  for (const start of starts) gate.enter(start)
  if (files.length === 0) afterWrites()
  return (settled) => {
    cancelled = settled
    // Past the writes (renaming, or cleaning up), the step ends as it is.
    if (writing === 0) return
    // Writes still waiting for a permit never start; once the last started one has ended, the temporary files go.
    for (const start of starts) if (gate.withdraw(start)) writing--
    if (writing === 0) afterWrites()
  }
}
