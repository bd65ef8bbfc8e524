import type { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import ignore, { type Ignore } from "ignore"
import { isInsidePath as isInside, readTextSafely } from "../../domain/safeFile.js"
import { stripControl } from "../../domain/text.js"

/** A `.gitignore` is a few kilobytes; a larger one is not read (nor one that is a link, as git itself does). */
const GITIGNORE_MAX_BYTES = 1024 * 1024

/** The `.gitignore` rules of one collection: each file read once, from the work tree's top down. */
export const gitignoreRules = (fs: FileSystem.FileSystem, path: Path.Path) => {
  // Rules by directory, read once.
  const rules = new Map<string, Ignore | undefined>()
  const rulesOf = (dir: string) =>
    // Not held to the roots: the rules only leave files out, and those of the work tree's top apply below it.
    rules.has(dir) ? Effect.succeed(rules.get(dir)) : readTextSafely(path.join(dir, ".gitignore"), { maxBytes: GITIGNORE_MAX_BYTES }).pipe(
      Effect.map((text): Ignore | undefined => ignore().add(text)),
      // A symlink (to /dev/zero, say), a FIFO or a huge file is not rules: said, and the directory read without them.
      Effect.catchAll((e) =>
        e.reason === "missing" ? Effect.succeed(undefined) : Effect.as(Effect.logWarning(stripControl(`${e.message}: not read`)), undefined)
      ),
      Effect.tap((r) => Effect.sync(() => rules.set(dir, r)))
    )
  /** The work tree's top (the nearest ancestor with `.git`), where .gitignore rules start; else `dir` itself. */
  const topOf = (dir: string) =>
    Effect.gen(function*() {
      for (let d = dir;; d = path.dirname(d)) {
        if (yield* fs.exists(path.join(d, ".git")).pipe(Effect.orElseSucceed(() => false))) return d
        if (path.dirname(d) === d) return dir
      }
    })
  /** Whether a .gitignore between `top` and the file's own directory ignores it. */
  const isIgnored = (top: string, abs: string, isDirectory: boolean) =>
    Effect.gen(function*() {
      if (!isInside(abs, top) || abs === top) return false
      const dirs: Array<string> = []
      for (let d = path.dirname(abs); isInside(d, top); d = path.dirname(d)) {
        dirs.unshift(d)
        if (d === top) break
      }
      for (const dir of dirs) {
        const r = yield* rulesOf(dir)
        const relative = path.relative(dir, abs).split(path.sep).join("/") + (isDirectory ? "/" : "")
        if (r?.ignores(relative)) return true
      }
      return false
    })

  return { isIgnored, topOf }
}
