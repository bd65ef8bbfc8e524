import type { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import ignore, { type Ignore } from "ignore"
import { isInsidePath as isInside, readTextSafely } from "../../domain/safeFile.js"
import { stripControl } from "../../domain/text.js"

/** A `.gitignore` is a few kilobytes; a larger one is not read (nor one that is a link, as git itself does). */
const GITIGNORE_MAX_BYTES = 1024 * 1024

/** The rules in force in one directory: each `.gitignore` from the work tree's top down to it, with its directory. */
type Chain = ReadonlyArray<{ readonly dir: string; readonly rules: Ignore }>

/**
 * The `.gitignore` rules of one collection: each file read once, from the work tree's top down. The rules in
 * force in a directory are settled once, from its parent's: a file is checked against them without walking
 * up to the top again (that walk, per file, made a deep tree cost its depth times over).
 */
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
  // Chains by work tree top and directory (the same directory may be below two tops: a spec without a work tree
  // starts its own); one directory's chain is its parent's array itself when it has no .gitignore of its own.
  const chains = new Map<string, Chain>()
  const chainOf = (top: string, dir: string): Effect.Effect<Chain> =>
    Effect.suspend(() => {
      if (!isInside(dir, top)) return Effect.succeed<Chain>([])
      const key = `${top}\0${dir}`
      const known = chains.get(key)
      if (known !== undefined) return Effect.succeed(known)
      const above = dir === top ? Effect.succeed<Chain>([]) : chainOf(top, path.dirname(dir))
      return Effect.zipWith(above, rulesOf(dir), (parent, own) => {
        const chain = own === undefined ? parent : [...parent, { dir, rules: own }]
        chains.set(key, chain)
        return chain
      })
    })
  /** The work tree's top (the nearest ancestor with `.git`), where .gitignore rules start; else `dir` itself. */
  const topOf = (dir: string) =>
    Effect.gen(function*() {
      for (let d = dir;; d = path.dirname(d)) {
        if (yield* fs.exists(path.join(d, ".git")).pipe(Effect.orElseSucceed(() => false))) return d
        if (path.dirname(d) === d) return dir
      }
    })
  /** `abs` as a path below `dir` (which holds it), with forward slashes as .gitignore patterns are written. */
  const below = (dir: string, abs: string) => path.relative(dir, abs).split(path.sep).join("/")
  /** Whether a .gitignore between `top` and the file's own directory ignores it. */
  const isIgnored = (top: string, abs: string, isDirectory: boolean) =>
    !isInside(abs, top) || abs === top
      ? Effect.succeed(false)
      : Effect.map(
        chainOf(top, path.dirname(abs)),
        (chain) => chain.some(({ dir, rules }) => rules.ignores(below(dir, abs) + (isDirectory ? "/" : "")))
      )

  return { isIgnored, topOf }
}
