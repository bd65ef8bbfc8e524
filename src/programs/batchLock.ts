import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import { plainFsReason, StoreError, UsageError } from "../domain/errors.js"
import { START_TIME_TOLERANCE_MS } from "../domain/runState.js"
import { probePid, thisHost, thisProcessStartedAt } from "../services/processProbe.js"

// One `batch` per results file: a second process on the same file would pay for every prompt again.

const LockHolder = Schema.Struct({
  pid: Schema.Int.pipe(Schema.positive()),
  host: Schema.String,
  processStartedAt: Schema.String,
  since: Schema.String
})
type LockHolder = typeof LockHolder.Type
const decodeHolder = Schema.decodeUnknownOption(Schema.parseJson(LockHolder))

/** How often a `--wait-lock` batch looks whether the holder is done. */
const POLL = "500 millis"

/** `<results>.lock`, beside the results file. */
export const lockPathFor = (results: string): string => `${results}.lock`

const describeHolder = (holder: LockHolder) => `batch process ${holder.pid} on ${holder.host}, since ${holder.since}`

/**
 * The results file's real path: a symlinked `--out` (or a symlinked directory on the way) is the same file,
 * so it must take the same lock. A file not made yet is named by its directory's real path.
 */
export const realResultsPath = Effect.fnUntraced(function*(results: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const absolute = path.resolve(results)
  const real = yield* fs.realPath(absolute).pipe(Effect.option)
  if (Option.isSome(real)) return real.value
  const dir = yield* fs.realPath(path.dirname(absolute)).pipe(Effect.orElseSucceed(() => path.dirname(absolute)))
  return path.join(dir, path.basename(absolute))
})

/**
 * Holds the results file's lock (beside its real path) for the rest of the scope: made with O_EXCL, removed at the end. A lock
 * whose holder died on this host (its pid gone, or now another process) is taken over. Otherwise the batch
 * is refused (exit 2, naming the holder) or, with `wait`, waits for the holder to end.
 */
export const holdResultsLock = Effect.fn("holdResultsLock")(function*(results: string, wait: boolean) {
  const fs = yield* FileSystem.FileSystem
  const lock = lockPathFor(yield* realResultsPath(results))
  const host = thisHost()
  const cannot = (e: unknown) => new StoreError({ path: lock, message: `cannot lock ${results}: ${plainFsReason(e)}` })
  const take = Effect.suspend(() =>
    fs.writeFileString(
      lock,
      JSON.stringify({ pid: process.pid, host, processStartedAt: thisProcessStartedAt().toISOString(), since: new Date().toISOString() }),
      { flag: "wx", mode: 0o600 }
    )
  ).pipe(
    Effect.as(true),
    Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => Effect.succeed(false)),
    Effect.mapError(cannot)
  )
  const isGone = (holder: LockHolder) =>
    holder.host !== host
      ? Effect.succeed(false)
      : probePid(fs, holder.pid).pipe(Effect.map((probe) =>
        probe._tag === "NoSuchProcess" ||
        (probe.startedAtMs !== undefined && Math.abs(probe.startedAtMs - Date.parse(holder.processStartedAt)) > START_TIME_TOLERANCE_MS)
      ))

  let told = false
  while (!(yield* take)) {
    const holder = yield* fs.readFileString(lock).pipe(Effect.map(decodeHolder), Effect.orElseSucceed(() => Option.none<LockHolder>()))
    if (Option.isSome(holder) && (yield* isGone(holder.value))) {
      yield* Effect.logWarning(`${results}: the lock of ${describeHolder(holder.value)} is left from a process that ended; taking it over`)
      yield* fs.remove(lock).pipe(Effect.ignore)
      continue
    }
    // An unreadable lock is being written, or was damaged: only a person can tell which.
    const who = Option.match(holder, { onNone: () => `another batch (if none runs, remove ${lock})`, onSome: describeHolder })
    if (!wait) {
      return yield* new UsageError({ message: `${results} is in use by ${who}; wait for it to end, or pass --wait-lock` })
    }
    if (!told) yield* Effect.logWarning(`${results} is in use by ${who}: waiting for it (--wait-lock)`)
    told = true
    yield* Effect.sleep(POLL)
  }
  yield* Effect.addFinalizer(() => fs.remove(lock).pipe(Effect.ignore))
})

/** Whether two paths are one file (the same device and inode: symlinks and hard links included). */
export const isSameFile = Effect.fn("isSameFile")(function*(a: string, b: string) {
  const fs = yield* FileSystem.FileSystem
  const [x, y] = yield* Effect.all([fs.stat(a).pipe(Effect.option), fs.stat(b).pipe(Effect.option)])
  if (Option.isNone(x) || Option.isNone(y)) return false
  return x.value.dev === y.value.dev && Option.getOrUndefined(x.value.ino) !== undefined &&
    Option.getOrUndefined(x.value.ino) === Option.getOrUndefined(y.value.ino)
})
