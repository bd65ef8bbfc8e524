import { Effect, Fiber, type Scope } from "effect"
import type { StoreError } from "../../domain/errors.js"
import type { StrategyRecord } from "../../domain/manifest.js"
import type { RunHandle } from "../../services/runStore.js"

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

/** The most unwritten files a manifest lists one by one; the rest are counted. */
export const UNWRITTEN_LISTED = 20

/** `unwritten` for the manifest: at most UNWRITTEN_LISTED files, then one line counting the others. */
export const listedUnwritten = (all: ReadonlyArray<Unwritten>): ReadonlyArray<Unwritten> =>
  all.length <= UNWRITTEN_LISTED ? all : [
    ...all.slice(0, UNWRITTEN_LISTED),
    { file: "…", message: `${all.length - UNWRITTEN_LISTED} more files could not be written either` }
  ]

/**
 * The files of one run, written beside its calls rather than in their way; all have ended before the manifest.
 * A write that fails (a full disk) never stops the run; it is tried once more when the others have ended
 * (`retryUnwritten`: space freed by a failed temp file comes back at once), and if it fails again the manifest
 * names neither the file nor anything that points to it (`withoutUnwritten`).
 */
export const makeRunWrites = (run: RunHandle, scope: Scope.Scope) => {
  // The writes started so far, and those that failed (with the write to try again): local to the run.
  const writes: Array<Fiber.RuntimeFiber<unknown>> = []
  const failed: Array<Unwritten & { readonly again?: Effect.Effect<string, StoreError> }> = []

  const relative = (error: StoreError) => error.path.startsWith(`${run.dir}/`) ? error.path.slice(run.dir.length + 1) : error.path

  const remember = (error: StoreError, again?: Effect.Effect<string, StoreError>) =>
    Effect.sync(() => failed.push({ file: relative(error), message: error.message, ...(again ? { again } : {}) }))

  /** Remembers a failed write of the run's own and says so; the run goes on. */
  const note = (error: StoreError, again?: Effect.Effect<string, StoreError>) =>
    Effect.zipRight(remember(error, again), Effect.logWarning(`${error.message}; the run goes on without that file for now`))

  /** Starts writing a file without waiting for it: a fiber of its own, which runs to its end even if the run is interrupted. */
  const save = (write: Effect.Effect<string, StoreError>) =>
    Effect.map(Effect.forkIn(Effect.uninterruptible(Effect.catchAll(write, (e) => note(e, write))), scope), (fiber) => {
      writes.push(fiber)
    })

  /** Once every write has settled: each failed `save` is tried once more; what fails again stays unwritten. */
  const retryUnwritten = Effect.suspend(() => {
    const retries = failed.flatMap((f) => (f.again !== undefined ? [{ file: f.file, again: f.again }] : []))
    if (retries.length === 0) return Effect.void
    failed.splice(0, failed.length, ...failed.filter((f) => f.again === undefined))
    return Effect.forEach(retries, ({ again, file }) =>
      again.pipe(
        Effect.zipRight(Effect.logInfo(`${file} written at the second try`)),
        Effect.catchAll((e) => Effect.zipRight(remember(e), Effect.logWarning(`${e.message}; the run ends without that file`)))
      ), { concurrency: 4, discard: true }).pipe(Effect.uninterruptible)
  })

  /** Every write started so far has ended, written or not: only those still going are waited for. */
  const allSettled = Effect.suspend(() => {
    const going = writes.filter((write) => write.unsafePoll() === null)
    return going.length === 0 ? Effect.void : Effect.asVoid(Fiber.awaitAll(going))
  })

  const unwritten = Effect.sync((): ReadonlyArray<Unwritten> => failed.map(({ file, message }) => ({ file, message })))

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

  /**
   * The strategy's record without the files of its step that are not on disk, whatever the strategy: a call in it
   * (rank's judges, refine's answers: an entry with a `status`) then says why, as a candidate does; any other
   * entry naming such a file (rank's labels) names none.
   */
  const strategyWithoutUnwritten = (record: StrategyRecord, all: ReadonlyArray<Unwritten>): StrategyRecord => {
    if (all.length === 0) return record
    const strip = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(strip)
      if (typeof value !== "object" || value === null) return value
      const entry = Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, strip(inner)]))
      const lost = all.filter((u) => u.file === entry.file || u.file === entry.partialFile)
      if (lost.length === 0) return entry
      const isLost = (file: unknown) => lost.some((u) => u.file === file)
      return {
        ...entry,
        ...(isLost(entry.file) ? { file: undefined } : {}),
        ...(isLost(entry.partialFile) ? { partialFile: undefined } : {}),
        ...("status" in entry ? { writeError: lost.map((u) => u.message).join("; ") } : {})
      }
    }
    return { ...record, ...Object.fromEntries(Object.entries(record).map(([key, value]) => [key, strip(value)])) }
  }

  return { save, note, allSettled, retryUnwritten, unwritten, withoutUnwritten, strategyWithoutUnwritten }
}

export type RunWrites = ReturnType<typeof makeRunWrites>
