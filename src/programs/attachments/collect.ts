import { FileSystem, Path } from "@effect/platform"
import { Effect, Option } from "effect"
import { glob, isDynamicPattern } from "tinyglobby"
import { RunRefused } from "../../domain/errors.js"
import { formatBytes } from "../../domain/format.js"
import { type FileRefused, isInsidePath as isInside, readFileSafely } from "../../domain/safeFile.js"
import { stripControl } from "../../domain/text.js"
import { Settings } from "../../services/Settings.js"
import { type Attachment, sha256Of, sniff } from "./attachment.js"
import { gitignoreRules } from "./gitignore.js"
import { globRefusal, globStart } from "./globs.js"

export interface CollectOptions {
  /** What relative paths are resolved against. */
  readonly base: string
  /** Real paths of the only directories files may come from (MCP); absent: anywhere (the CLI). */
  readonly allowed?: ReadonlyArray<string> | undefined
  /** How the paths are named in messages (`--attach`, `files`). */
  readonly what: string
}

/** A file to read: how it is named, where it is, and whether the user named it (else a directory or a glob found it). */
interface Found {
  readonly display: string
  readonly abs: string
  readonly named: boolean
  /** Found in a directory: only its text files are attached. */
  readonly inDirectory: boolean
}

/**
 * The files named by `specs` (files, directories, glob patterns), read, checked and classified. A directory
 * gives its text files, honouring `.gitignore` (from the enclosing git work tree down) and skipping `.git`;
 * a glob gives the files it matches outside ignored paths. A named binary file that is neither an image nor
 * a PDF, a file over the per-file cap, a total over the run's cap, or (MCP) a file whose real path lies outside
 * the allowed directories refuses the whole run, naming the path: nothing is sent.
 */
export const collectAttachments = Effect.fn("collectAttachments")(function*(specs: ReadonlyArray<string>, options: CollectOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const settings = yield* Settings
  // File names found on disk may hold anything: no control character reaches a terminal.
  const refuse = (message: string) => new RunRefused({ message: stripControl(`${options.what}: ${message}`) })

  const outside = (display: string, real: string | undefined, allowed: ReadonlyArray<string>) =>
    refuse(
      `${display}${real === undefined ? "" : ` (${real})`} lies outside the directories this server may read: ` +
        (allowed.length === 0
          ? "none (this client sent no roots, and the server was started without --allow-dir). Start the server with " +
            "--allow-dir <directory> (or PARALLEL_LLM_ALLOW_DIRS), or use a client that sends its roots"
          : `${allowed.join(", ")}. Add it to the client's roots, or start the server with --allow-dir`)
    )
  // Every file found counts, read or skipped: a directory of 100,000 files is refused before any is read.
  let found = 0
  const count = (display: string) =>
    ++found > settings.attachMaxFiles
      ? refuse(
        `with ${display} more than ${settings.attachMaxFiles.toLocaleString("en-US")} files are attached, the most one run may ` +
          `attach (--attach-max-files)`
      )
      : Effect.void
  const checkAllowed = (display: string, abs: string) =>
    Effect.gen(function*() {
      const allowed = options.allowed
      if (allowed === undefined) return
      const real = yield* fs.realPath(abs).pipe(Effect.mapError((e) => refuse(`cannot read ${display}: ${e.message}`)))
      if (!allowed.some((root) => isInside(real, root))) return yield* outside(display, real === abs ? undefined : real, allowed)
    })

  const { isIgnored, topOf } = gitignoreRules(fs, path)

  /** Every file below `dir`, sorted, without ignored ones, `.git`, or a directory seen before (a symlink loop). */
  const walk = (dir: string, display: string, top: string, seen: Set<string>): Effect.Effect<ReadonlyArray<Found>, RunRefused> =>
    Effect.gen(function*() {
      const real = yield* fs.realPath(dir).pipe(Effect.orElseSucceed(() => dir))
      if (seen.has(real)) return []
      seen.add(real)
      // A symlink to a directory outside the allowed ones is refused before it is listed: not even names leak.
      if (options.allowed !== undefined) yield* checkAllowed(display, dir)
      const names = [...(yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => [])))].sort()
      const found: Array<Found> = []
      for (const name of names) {
        if (name === ".git") continue
        const abs = path.join(dir, name)
        const shown = path.join(display, name)
        const info = yield* fs.stat(abs).pipe(Effect.option)
        if (Option.isNone(info)) continue
        const isDirectory = info.value.type === "Directory"
        if (yield* isIgnored(top, abs, isDirectory)) continue
        if (isDirectory) found.push(...(yield* walk(abs, shown, top, seen)))
        else if (info.value.type === "File") {
          yield* count(shown)
          found.push({ display: shown, abs, named: false, inDirectory: true })
        }
      }
      return found
    })

  const expand = (spec: string) =>
    Effect.gen(function*() {
      const abs = path.resolve(options.base, spec)
      const info = yield* fs.stat(abs).pipe(Effect.either)
      if (info._tag === "Left") {
        if (!isDynamicPattern(spec)) return yield* refuse(`cannot read ${spec}: no such file or directory`)
        const refusal = globRefusal(spec, options.base, options.allowed !== undefined)
        if (refusal !== undefined) return yield* refuse(refusal)
        // Where the pattern starts must be allowed already: a glob never crawls a directory it may not read.
        yield* checkAllowed(spec, globStart(spec, options.base))
        const matches = yield* Effect.tryPromise({
          // Symlinks are not followed over MCP: a link inside a root must not walk the glob out of it.
          // The signal stops the crawl when the run is interrupted (Ctrl-C, SIGTERM).
          try: (signal) =>
            glob(spec, {
              signal,
              cwd: options.base,
              absolute: true,
              onlyFiles: true,
              expandDirectories: false,
              ignore: ["**/.git/**"],
              followSymbolicLinks: options.allowed === undefined
            }),
          catch: (e) => refuse(`${spec}: not a usable glob pattern (${String(e)})`)
        })
        const top = yield* topOf(options.base)
        const kept: Array<Found> = []
        for (const match of [...matches].sort()) {
          if (yield* isIgnored(top, match, false)) continue
          yield* count(match)
          kept.push({
            display: path.isAbsolute(spec) ? match : path.relative(options.base, match),
            abs: match,
            named: false,
            inDirectory: false
          })
        }
        if (kept.length === 0) return yield* refuse(`no file matches ${spec}`)
        return kept
      }
      yield* checkAllowed(spec, abs)
      switch (info.right.type) {
        case "Directory":
          return yield* walk(abs, spec, yield* topOf(abs), new Set())
        case "File":
          yield* count(spec)
          return [{ display: spec, abs, named: true, inDirectory: false }]
        default:
          return yield* refuse(`${spec} is neither a file nor a directory`)
      }
    })

  const attachments: Array<Attachment> = []
  const seen = new Set<string>()
  let total = 0
  for (const spec of specs) {
    for (const file of yield* expand(spec)) {
      yield* checkAllowed(file.display, file.abs)
      const real = yield* fs.realPath(file.abs).pipe(Effect.orElseSucceed(() => file.abs))
      if (seen.has(real)) continue
      seen.add(real)
      const tooLarge = (size: number) =>
        refuse(
          `${file.display} has ${formatBytes(size)}, more than the ${
            formatBytes(settings.attachMaxBytes)
          } allowed per file (--attach-max-bytes)`
        )
      const cannotRead = (e: { readonly message: string }) => refuse(`cannot read ${file.display}: ${e.message}`)
      // The size first: a huge file is refused without being read, with its size.
      const size = Number((yield* fs.stat(file.abs).pipe(Effect.mapError(cannotRead))).size)
      if (size > settings.attachMaxBytes) return yield* tooLarge(size)
      // Then the file opened once, checked as opened (a regular file, inside the roots), read up to the cap:
      // `stat` may say 0 (`/proc`), and the path may have been swapped for a link since the checks above.
      const bytes = yield* readFileSafely(file.abs, { maxBytes: settings.attachMaxBytes, followLinks: true, inside: options.allowed })
        .pipe(Effect.mapError((e: FileRefused) =>
          e.reason === "too large"
            ? refuse(
              `${file.display} is larger than the ${formatBytes(settings.attachMaxBytes)} allowed per file (--attach-max-bytes)`
            )
            : e.reason === "outside"
            ? outside(file.display, undefined, options.allowed ?? [])
            : refuse(`cannot read ${file.display}: ${e.detail}`)
        ))
      const kind = sniff(bytes)
      if (kind === undefined || (file.inDirectory && kind.kind !== "text")) {
        if (file.named) {
          return yield* refuse(`${file.display} is a binary file (only text, PNG, JPEG, WebP, GIF and PDF files can be attached)`)
        }
        yield* Effect.logWarning(`${file.display}: skipped, ${kind === undefined ? "a binary file" : "not a text file"}`)
        continue
      }
      total += bytes.length
      if (total > settings.attachMaxTotalBytes) {
        return yield* refuse(
          `with ${file.display} the attachments add up to ${formatBytes(total)}, more than the ` +
            `${formatBytes(settings.attachMaxTotalBytes)} allowed in one run (--attach-max-total-bytes)`
        )
      }
      attachments.push({ path: file.display, kind: kind.kind, mediaType: kind.mediaType, bytes, sha256: sha256Of(bytes), text: kind.text })
    }
  }
  return attachments
})
