import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import * as nodePath from "node:path"

/**
 * `mkdir -p`: `dir` and any parent it lacks, each with `mode`. Not Node's `recursive: true`: on Node 20 that
 * loops for ever where a parent exists but cannot hold the child (`/proc/x`), stepping back on ENOENT and forward
 * on EEXIST without end. Here a directory still not found once its parent is there fails with that ENOENT. A file
 * in the way fails with EEXIST, as `recursive: true` does.
 */
export const makeDirectories = (fs: FileSystem.FileSystem, dir: string, mode: number): Effect.Effect<void, PlatformError> => {
  // One directory, or one already there (made by another process meanwhile, say).
  const once = (target: string): Effect.Effect<void, PlatformError> =>
    fs.makeDirectory(target, { mode }).pipe(
      Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", (e) =>
        Effect.flatMap(fs.stat(target), (info) => (info.type === "Directory" ? Effect.void : Effect.fail(e))))
    )
  const make = (target: string): Effect.Effect<void, PlatformError> =>
    once(target).pipe(
      Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", (e) => {
        const parent = nodePath.dirname(target)
        return parent === target ? Effect.fail(e) : Effect.zipRight(make(parent), once(target))
      })
    )
  // Most calls find the directory there (a run store's root, at every run): one stat that succeeds, rather than a
  // mkdir that fails with EEXIST (an error built with its stack) and a stat.
  const target = nodePath.resolve(dir)
  return fs.stat(target).pipe(
    Effect.map((info) => info.type === "Directory"),
    Effect.orElseSucceed(() => false),
    Effect.flatMap((there) => (there ? Effect.void : make(target)))
  )
}
