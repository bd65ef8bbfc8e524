import { Effect, Fiber, type Scope } from "effect"
import type { StoreError } from "../../domain/errors.js"
import type { RunHandle } from "../../services/RunStore.js"

/** A file of the run that could not be written, relative to the run directory, and why. */
export interface Unwritten {
  readonly file: string
  readonly message: string
}

/** Anything a manifest records with a file: the file is named only if it is on disk. */
interface WithFiles {
  readonly file?: string | undefined
  readonly partialFile?: string | undefined
  readonly writeError?: string | undefined
}

/**
 * The files of one run, written beside its calls rather than in their way; all have ended before the manifest.
 * A write that fails (a full disk) never stops the run: the manifest then names neither the file nor anything
 * that points to it (`withoutUnwritten`).
 */
export const makeRunWrites = Effect.fnUntraced(function*(run: RunHandle, scope: Scope.Scope) {
  // The writes started so far, and those that failed: local to the run, touched only in plain code.
  const writes: Array<Fiber.RuntimeFiber<unknown>> = []
  const failed: Array<Unwritten> = []

  const relative = (error: StoreError) => error.path.startsWith(`${run.dir}/`) ? error.path.slice(run.dir.length + 1) : error.path

  /** Remembers a failed write of the run's own and says so; the run goes on. */
  const note = (error: StoreError) =>
    Effect.zipRight(
      Effect.sync(() => failed.push({ file: relative(error), message: error.message })),
      Effect.logWarning(`${error.message}; the run goes on without that file`)
    )

  /** Starts writing a file without waiting for it: a fiber of its own, which runs to its end even if the run is interrupted. */
  const save = (write: Effect.Effect<string, StoreError>) =>
    Effect.map(Effect.forkIn(Effect.uninterruptible(Effect.catchAll(write, note)), scope), (fiber) => {
      writes.push(fiber)
    })

  /** Every write started so far has ended, written or not: only those still going are waited for. */
  const allSettled = Effect.suspend(() => {
    const going = writes.filter((write) => write.unsafePoll() === null)
    return going.length === 0 ? Effect.void : Effect.asVoid(Fiber.awaitAll(going))
  })

  const unwritten = Effect.sync((): ReadonlyArray<Unwritten> => failed.slice())

  /** The record without the files that are not on disk, with the write error instead. */
  const withoutUnwritten = <R extends WithFiles>(record: R, all: ReadonlyArray<Unwritten>): R => {
    const lost = all.filter((u) => u.file === record.file || u.file === record.partialFile)
    if (lost.length === 0) return record
    const isLost = (file: string | undefined) => lost.some((u) => u.file === file)
    // Left undefined rather than deleted: the manifest's JSON has no such key either way.
    return {
      ...record,
      file: isLost(record.file) ? undefined : record.file,
      partialFile: isLost(record.partialFile) ? undefined : record.partialFile,
      writeError: lost.map((u) => u.message).join("; ")
    }
  }

  return { save, note, allSettled, unwritten, withoutUnwritten }
})

export type RunWrites = Effect.Effect.Success<ReturnType<typeof makeRunWrites>>
