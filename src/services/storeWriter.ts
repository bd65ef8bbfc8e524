import { FileSystem, Path } from "@effect/platform"
import { Effect, type Option, type Redacted, RuntimeFlags } from "effect"
import * as crypto from "node:crypto"
import { fsFailure, StoreError } from "../domain/errors.js"
import { makeRedact } from "../domain/redact.js"
import { makePermitLine, type PermitLine } from "./permitLine.js"
import { StoreDisk, type StoreDiskShape, writeAtomically } from "./storeDisk.js"

// How the run store writes its files (runStore.ts says which files): private to their owner, every one atomically,
// a bounded number at once, and never holding the key.

/**
 * How many files this process writes at once, across all its runs: a run attaching a thousand files forks a
 * write for each, and unbounded they exhaust the process's file descriptors (EMFILE), losing paid answers.
 */
const WRITE_CONCURRENCY = 16

/** Prompts often hold private code: runs are readable by their owner only. */
export const PRIVATE_DIR = { mode: 0o700 }
const PRIVATE_FILE = { mode: 0o600 }

/**
 * How the store writes: atomically, through the write gate, the key redacted. One per store; its counters are
 * the store's only state (`temps`: temporary names are counted, not drawn at random per file).
 */
export interface Writer {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly disk: StoreDiskShape
  readonly redact: (text: string) => string
  /** One permit per write at once, {@link WRITE_CONCURRENCY} of them. */
  readonly gate: PermitLine
  readonly fail: (target: string) => (error: unknown) => StoreError
  readonly tempFor: (target: string) => string
}

export const makeWriter = Effect.fnUntraced(function*(apiKey: Option.Option<Redacted.Redacted>) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  // `.<file>.<random>.tmp`: random per process, then counted (no random bytes drawn per file).
  const tempTag = crypto.randomBytes(6).toString("hex")
  const counter = { temps: 0 }
  return {
    fs,
    path,
    disk: yield* StoreDisk,
    // What a run records never holds the key, whatever field it reached (a prompt, a title, an id).
    redact: makeRedact(apiKey),
    gate: makePermitLine(WRITE_CONCURRENCY),
    fail: (target) => (error) => new StoreError({ path: target, message: fsFailure(`cannot write ${target}`, error) }),
    // The target's folder and name by slicing, not `path.dirname`/`basename`: every file of every run passes here,
    // and its path was made by `path.join` (absolute, normalized).
    tempFor: (target) => {
      const cut = target.lastIndexOf(path.sep) + 1
      return `${target.slice(0, cut)}.${target.slice(cut)}.${tempTag}${(counter.temps++).toString(36)}.tmp`
    }
  } satisfies Writer
})

/**
 * Temporary siblings then renames, in the order given: a reader (or a crash) never sees half a file, nor a later
 * file without an earlier one. `thenRemove` goes once all are in place. Interrupted, it ends what is in flight
 * and removes what it wrote under temporary names.
 *
 * Most writes run uninterruptibly (a run's files are saved in fibers of their own that cannot be cut, its manifest
 * under the run's mask): such a wait cannot be interrupted, so it is given no canceler, which would cost every write
 * an `onInterrupt` (a mask, a match and a continuation) for nothing.
 */
export const writeAtomic = (
  w: Writer,
  files: ReadonlyArray<readonly [target: string, data: string | Uint8Array]>,
  thenRemove?: string
): Effect.Effect<void, StoreError> =>
  Effect.withFiberRuntime((_, status) => {
    const start = (resume: (written: Effect.Effect<void, StoreError>) => void) => {
      const pending = files.map(([target, data]) => ({ target, temp: w.tempFor(target), data }))
      return writeAtomically(w.disk, w.gate, pending, PRIVATE_FILE.mode, thenRemove, (failure) =>
        resume(failure === undefined ? Effect.void : Effect.fail(w.fail(failure.target)(failure.error))))
    }
    if (!RuntimeFlags.interruption(status.runtimeFlags)) {
      return Effect.async<void, StoreError>((resume) => {
        start(resume)
      })
    }
    return Effect.async<void, StoreError>((resume) => {
      const cancel = start(resume)
      return Effect.async<void>((settled) =>
        cancel(() =>
          settled(Effect.void)
        )
      )
    })
  })
