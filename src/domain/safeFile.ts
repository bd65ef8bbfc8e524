import { Duration, Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as nodePath from "node:path"

// The one way a file that comes from outside (an attachment, a .gitignore, a run's file, a config file) is
// read. Node's `fs` directly, not the platform FileSystem: that one has no O_NOFOLLOW / O_NONBLOCK open and no
// fstat of an open handle, and the point here is to check the very file that was opened, then read only it.

/** Why a file was not read: its path, the kind of reason, the reason in words, and both in one line. */
export class FileRefused extends Schema.TaggedError<FileRefused>()("FileRefused", {
  path: Schema.String,
  reason: Schema.Literal("missing", "not a regular file", "outside", "too large", "timeout", "unreadable"),
  detail: Schema.String,
  message: Schema.String
}) {}

export interface SafeReadOptions {
  /** At most this many bytes are read: a longer file is `too large` (or, with `head`, cut here). */
  readonly maxBytes: number
  /** Return the first `maxBytes` bytes of a longer file instead of refusing it. */
  readonly head?: boolean | undefined
  /** A symlink as the last component is followed (default: refused, O_NOFOLLOW). The real path is checked either way. */
  readonly followLinks?: boolean | undefined
  /** Real paths of the directories (or files) the opened file must lie in; absent: anywhere. */
  readonly inside?: ReadonlyArray<string> | undefined
  /** How long the whole read may take (default 10 s). */
  readonly timeout?: Duration.DurationInput | undefined
}

const { O_NOCTTY = 0, O_NOFOLLOW = 0, O_NONBLOCK = 0, O_RDONLY } = fs.constants
const CHUNK = 64 * 1024

/** Whether `real` is `root` or below it. */
export const isInsidePath = (real: string, root: string): boolean =>
  real === root || real.startsWith(root.endsWith(nodePath.sep) ? root : root + nodePath.sep)

const codeOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/**
 * The opened file's real path: `/proc/self/fd/N` where there is one (Linux); else the path's real path,
 * kept only if it is still the same file (device and inode) as the one opened.
 */
const realPathOf = (handle: fs.promises.FileHandle, file: string, opened: fs.Stats) =>
  Effect.tryPromise(() => fs.promises.readlink(`/proc/self/fd/${handle.fd}`)).pipe(
    Effect.orElse(() =>
      Effect.tryPromise(async () => {
        const real = await fs.promises.realpath(file)
        const now = await fs.promises.stat(real)
        return now.dev === opened.dev && now.ino === opened.ino ? real : undefined
      })
    ),
    Effect.orElseSucceed(() => undefined)
  )

/**
 * Reads from the open handle until `limit` bytes or the end: never trusts `stat`'s size (`/proc` files say 0).
 * Whole chunks (some `/proc` files refuse a read of an odd size), so at most one chunk past `limit`.
 */
const readUpTo = (handle: fs.promises.FileHandle, limit: number) =>
  Effect.gen(function*() {
    const chunks: Array<Buffer> = []
    let total = 0
    while (total < limit) {
      const buffer = Buffer.allocUnsafe(CHUNK)
      const { bytesRead } = yield* Effect.tryPromise({ try: () => handle.read(buffer, 0, CHUNK, null), catch: codeOf })
      if (bytesRead === 0) break
      chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
    }
    return new Uint8Array(Buffer.concat(chunks, Math.min(total, limit)))
  })

/**
 * Opens `file` once (no symlink followed unless asked, never blocking on a FIFO), checks what was opened (a
 * regular file, inside `inside`), and reads at most `maxBytes + 1` bytes from that same descriptor, within a
 * timeout. Every refusal is a `FileRefused` naming the path and the reason in one line.
 */
export const readFileSafely = (file: string, options: SafeReadOptions): Effect.Effect<Uint8Array, FileRefused> => {
  const refuse = (reason: FileRefused["reason"], detail: string) =>
    new FileRefused({ path: file, reason, detail, message: `${file}: ${detail}` })
  const flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | (options.followLinks === true ? 0 : O_NOFOLLOW)
  const open = Effect.acquireRelease(
    Effect.tryPromise({
      try: () => fs.promises.open(file, flags),
      catch: (e) => {
        const code = codeOf(e)
        return code === "ENOENT" || code === "ENOTDIR"
          ? refuse("missing", "no such file")
          : code === "ELOOP" || code === "ENXIO"
          ? refuse("not a regular file", code === "ELOOP" ? "a symbolic link, not a regular file" : "not a regular file")
          : refuse("unreadable", `cannot be read (${code ?? String(e)})`)
      }
    }),
    (handle) => Effect.promise(() => handle.close()).pipe(Effect.ignore)
  )
  return Effect.scoped(Effect.gen(function*() {
    const handle = yield* open
    const stats = yield* Effect.tryPromise({ try: () => handle.stat(), catch: () => refuse("unreadable", "cannot be read") })
    if (!stats.isFile()) {
      return yield* refuse("not a regular file", stats.isDirectory() ? "a directory, not a regular file" : "not a regular file")
    }
    const inside = options.inside
    if (inside !== undefined) {
      const real = yield* realPathOf(handle, file, stats)
      if (real === undefined || !inside.some((root) => isInsidePath(real, root))) {
        return yield* refuse("outside", `${real === undefined || real === file ? "" : `(${real}) `}lies outside the allowed directories`)
      }
    }
    const bytes = yield* readUpTo(handle, options.maxBytes + 1).pipe(
      Effect.mapError((code) => refuse("unreadable", `cannot be read (${code ?? "read failed"})`))
    )
    if (bytes.length <= options.maxBytes) return bytes
    if (options.head === true) return bytes.subarray(0, options.maxBytes)
    return yield* refuse("too large", `larger than ${options.maxBytes} bytes`)
  })).pipe(
    Effect.timeoutFail({
      duration: options.timeout ?? Duration.seconds(10),
      onTimeout: () => refuse("timeout", "not read within the time allowed")
    })
  )
}

/** `readFileSafely`, as UTF-8 text. */
export const readTextSafely = (file: string, options: SafeReadOptions): Effect.Effect<string, FileRefused> =>
  Effect.map(readFileSafely(file, options), (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"))

/**
 * A file a user names for a command to read whole (a batch's prompts or results, an eval dataset or results):
 * its link followed, a regular file (never a FIFO waited on), at most 256 MiB, within a minute.
 */
export const USER_FILE_READ: SafeReadOptions = { maxBytes: 256 * 1024 * 1024, followLinks: true, timeout: "60 seconds" }
