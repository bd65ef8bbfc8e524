import { FileSystem, Path } from "@effect/platform"
import { Effect, Option, Ref } from "effect"
import { glob, isDynamicPattern } from "tinyglobby"
import { RunRefused } from "../../domain/errors.js"
import { formatBytes } from "../../domain/format.js"
import { sha256Hex } from "../../domain/hash.js"
import { type FileRefused, isInsidePath as isInside, readFileSafely } from "../../domain/safeFile.js"
import { stripControl } from "../../domain/text.js"
import { Settings } from "../../services/settings.js"
import type { SettingsValue } from "../../settings/values.js"
import { type Attachment, sniff } from "./attachment.js"
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
  const c = yield* makeCollector(options)
  const tally: Tally = { attachments: [], seen: new Set(), total: 0 }
  for (const spec of specs) {
    for (const file of yield* expand(c, spec)) yield* attach(c, tally, file)
  }
  return tally.attachments
})

/** What every step of one collection shares: the platform, the caps, and where files may come from. */
interface Collector {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly settings: SettingsValue
  readonly options: CollectOptions
  readonly gitignore: ReturnType<typeof gitignoreRules>
  /** Files found so far, read or skipped: a directory of 100,000 files is refused before any is read. */
  readonly found: Ref.Ref<number>
  readonly refuse: (message: string) => RunRefused
}

/** What the files attached so far add up to; a file reached twice (a link, two specs) is attached once. */
interface Tally {
  readonly attachments: Array<Attachment>
  /** The files read, by `identityOf`. */
  readonly seen: Set<string>
  total: number
}

const makeCollector = Effect.fnUntraced(function*(options: CollectOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const collector: Collector = {
    fs,
    path,
    settings: yield* Settings,
    options,
    gitignore: gitignoreRules(fs, path),
    found: yield* Ref.make(0),
    // File names found on disk may hold anything: no control character reaches a terminal.
    refuse: (message) => new RunRefused({ message: stripControl(`${options.what}: ${message}`) })
  }
  return collector
})

const outside = (c: Collector, display: string, real: string | undefined) => {
  const allowed = c.options.allowed ?? []
  return c.refuse(
    `${display}${real === undefined ? "" : ` (${real})`} lies outside the directories this server may read: ` +
      (allowed.length === 0
        ? "none (this client sent no roots, and the server was started without --allow-dir). Start the server with " +
          "--allow-dir <directory> (or PARALLEL_LLM_ALLOW_DIRS), or use a client that sends its roots"
        : `${allowed.join(", ")}. Add it to the client's roots, or start the server with --allow-dir`)
  )
}

/** Counts one more file found, refusing the run past --attach-max-files. */
const count = (c: Collector, display: string) =>
  Effect.flatMap(Ref.updateAndGet(c.found, (n) => n + 1), (found) =>
    found > c.settings.attachMaxFiles
      ? c.refuse(
        `with ${display} more than ${c.settings.attachMaxFiles.toLocaleString("en-US")} files are attached, the most one run may ` +
          `attach (--attach-max-files)`
      )
      : Effect.void)

/** (MCP) Refuses a path whose real path lies outside the allowed directories; the CLI may read anywhere. */
const checkAllowed = (c: Collector, display: string, abs: string) =>
  Effect.gen(function*() {
    const allowed = c.options.allowed
    if (allowed === undefined) return
    const real = yield* c.fs.realPath(abs).pipe(Effect.mapError((e) => c.refuse(`cannot read ${display}: ${e.message}`)))
    if (!allowed.some((root) => isInside(real, root))) return yield* outside(c, display, real === abs ? undefined : real)
  })

/**
 * Which file or directory on disk `abs` is (what `stat` said of it, links followed): its device and inode, known
 * without resolving its real path (the platform's realPath looks up every directory on the way, for each file: a
 * deep tree paid its depth per file); its real path where there is no inode.
 */
const identityOf = (c: Collector, info: FileSystem.File.Info, abs: string) =>
  Option.isSome(info.ino)
    ? Effect.succeed(`${info.dev}:${info.ino.value}`)
    : c.fs.realPath(abs).pipe(Effect.orElseSucceed(() => abs))

/** The files one spec names: itself, a directory's files, or a glob's matches. */
const expand = (c: Collector, spec: string) =>
  Effect.gen(function*() {
    const abs = c.path.resolve(c.options.base, spec)
    const info = yield* c.fs.stat(abs).pipe(Effect.either)
    // Only what does not exist is read as a pattern: a file may well be named `[draft].md`.
    if (info._tag === "Left") return yield* expandGlob(c, spec)
    yield* checkAllowed(c, spec, abs)
    switch (info.right.type) {
      case "Directory": {
        const w: Walk = { dir: abs, display: spec, top: yield* c.gitignore.topOf(abs), seen: new Set(), out: [] }
        yield* walk(c, w, yield* identityOf(c, info.right, abs))
        return w.out
      }
      case "File":
        yield* count(c, spec)
        return [{ display: spec, abs, named: true, inDirectory: false }]
      default:
        return yield* c.refuse(`${spec} is neither a file nor a directory`)
    }
  })

/**
 * A directory being walked: how it is shown, the work tree top its .gitignore rules start from, the directories
 * seen (by `identityOf`), and the files found so far (one list for the whole walk: a file is not copied again at every level above it).
 */
interface Walk {
  readonly dir: string
  readonly display: string
  readonly top: string
  readonly seen: Set<string>
  readonly out: Array<Found>
}

/** Adds every file below `dir` to `out`, sorted, without ignored ones, `.git`, or a directory seen before (a symlink loop). */
const walk = (c: Collector, w: Walk, identity: string): Effect.Effect<void, RunRefused> =>
  Effect.gen(function*() {
    if (w.seen.has(identity)) return
    w.seen.add(identity)
    // A symlink to a directory outside the allowed ones is refused before it is listed: not even names leak.
    if (c.options.allowed !== undefined) yield* checkAllowed(c, w.display, w.dir)
    const names = [...(yield* c.fs.readDirectory(w.dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => [])))].sort()
    yield* Effect.forEach(names.filter((name) => name !== ".git"), (name) => walkEntry(c, w, name), { discard: true })
  })

/** One entry of a walked directory: a file found, the files below a directory, or nothing. */
const walkEntry = (c: Collector, w: Walk, name: string) =>
  Effect.gen(function*() {
    const abs = c.path.join(w.dir, name)
    const shown = c.path.join(w.display, name)
    const info = yield* c.fs.stat(abs).pipe(Effect.option)
    if (Option.isNone(info)) return
    const isDirectory = info.value.type === "Directory"
    if (yield* c.gitignore.isIgnored(w.top, abs, isDirectory)) return
    if (isDirectory) return yield* walk(c, { ...w, dir: abs, display: shown }, yield* identityOf(c, info.value, abs))
    if (info.value.type !== "File") return
    yield* count(c, shown)
    w.out.push({ display: shown, abs, named: false, inDirectory: true })
  })

/** The files a glob pattern matches, outside ignored paths; a pattern that matches nothing refuses the run. */
const expandGlob = (c: Collector, spec: string) =>
  Effect.gen(function*() {
    const { base, allowed } = c.options
    if (!isDynamicPattern(spec)) return yield* c.refuse(`cannot read ${spec}: no such file or directory`)
    const refusal = globRefusal(spec, base, allowed !== undefined)
    if (refusal !== undefined) return yield* c.refuse(refusal)
    // Where the pattern starts must be allowed already: a glob never crawls a directory it may not read.
    yield* checkAllowed(c, spec, globStart(spec, base))
    const matches = yield* Effect.tryPromise({
      // Symlinks are not followed over MCP: a link inside a root must not walk the glob out of it.
      // The signal stops the crawl when the run is interrupted (Ctrl-C, SIGTERM).
      try: (signal) =>
        glob(spec, {
          signal,
          cwd: base,
          absolute: true,
          onlyFiles: true,
          expandDirectories: false,
          ignore: ["**/.git/**"],
          followSymbolicLinks: allowed === undefined
        }),
      catch: (e) => c.refuse(`${spec}: not a usable glob pattern (${String(e)})`)
    })
    const top = yield* c.gitignore.topOf(base)
    const kept = (yield* Effect.forEach([...matches].sort(), (match) => keptMatch(c, spec, top, match))).flat()
    if (kept.length === 0) return yield* c.refuse(`no file matches ${spec}`)
    return kept
  })

/** A glob's match, counted, unless a .gitignore leaves it out. */
const keptMatch = (c: Collector, spec: string, top: string, match: string) =>
  Effect.gen(function*() {
    if (yield* c.gitignore.isIgnored(top, match, false)) return []
    yield* count(c, match)
    const file: Found = {
      display: c.path.isAbsolute(spec) ? match : c.path.relative(c.options.base, match),
      abs: match,
      named: false,
      inDirectory: false
    }
    return [file]
  })

/** Reads one file found and adds it to the tally, unless it was attached already or is a binary file found by a walk or a glob. */
const attach = (c: Collector, tally: Tally, file: Found) =>
  Effect.gen(function*() {
    yield* checkAllowed(c, file.display, file.abs)
    const info = yield* c.fs.stat(file.abs).pipe(Effect.mapError((e) => c.refuse(`cannot read ${file.display}: ${e.message}`)))
    const same = yield* identityOf(c, info, file.abs)
    if (tally.seen.has(same)) return
    tally.seen.add(same)
    const bytes = yield* readChecked(c, file, Number(info.size))
    const kind = sniff(bytes)
    if (kind === undefined || (file.inDirectory && kind.kind !== "text")) {
      if (file.named) {
        return yield* c.refuse(`${file.display} is a binary file (only text, PNG, JPEG, WebP, GIF and PDF files can be attached)`)
      }
      return yield* Effect.logWarning(`${file.display}: skipped, ${kind === undefined ? "a binary file" : "not a text file"}`)
    }
    tally.total += bytes.length
    if (tally.total > c.settings.attachMaxTotalBytes) {
      return yield* c.refuse(
        `with ${file.display} the attachments add up to ${formatBytes(tally.total)}, more than the ` +
          `${formatBytes(c.settings.attachMaxTotalBytes)} allowed in one run (--attach-max-total-bytes)`
      )
    }
    tally.attachments.push({
      path: file.display,
      kind: kind.kind,
      mediaType: kind.mediaType,
      bytes,
      sha256: sha256Hex(bytes),
      text: kind.text
    })
  })

/** A file's bytes, within the per-file cap; `size` is what `stat` said. */
const readChecked = (c: Collector, file: Found, size: number) =>
  Effect.gen(function*() {
    const max = c.settings.attachMaxBytes
    // The size first: a huge file is refused without being read, with its size.
    if (size > max) {
      return yield* c.refuse(
        `${file.display} has ${formatBytes(size)}, more than the ${formatBytes(max)} allowed per file (--attach-max-bytes)`
      )
    }
    // Then the file opened once, checked as opened (a regular file, inside the roots), read up to the cap:
    // `stat` may say 0 (`/proc`), and the path may have been swapped for a link since the checks above.
    return yield* readFileSafely(file.abs, { maxBytes: max, followLinks: true, inside: c.options.allowed }).pipe(
      Effect.mapError((e: FileRefused) =>
        e.reason === "too large"
          ? c.refuse(`${file.display} is larger than the ${formatBytes(max)} allowed per file (--attach-max-bytes)`)
          : e.reason === "outside"
          ? outside(c, file.display, undefined)
          : c.refuse(`cannot read ${file.display}: ${e.detail}`)
      )
    )
  })
