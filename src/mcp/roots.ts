import { FileSystem } from "@effect/platform"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { RootsListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Array as Arr, Effect, Either, Option, Schema } from "effect"
import { fileURLToPath } from "node:url"
import { ProcessIo } from "../services/processIo.js"
import { Settings } from "../services/settings.js"

/** Where a tool call may read attached files from. */
export interface FileRoots {
  /** What a relative path is resolved against: the client's first root, else the first `--allow-dir`, else the working directory. */
  readonly base: string
  /** Real paths (symlinks resolved) of the directories files may come from. */
  readonly allowed: ReadonlyArray<string>
}

/** The client declares roots but did not list them: no file can be checked against them. */
export class RootsUnavailable extends Schema.TaggedError<RootsUnavailable>()("RootsUnavailable", { message: Schema.String }) {}

/** How long a client may take to answer `roots/list`. */
const ROOTS_TIMEOUT_MS = 10_000

const pathOf = (uri: string): Option.Option<string> =>
  uri.startsWith("file:") ? Option.getRight(Either.try(() => fileURLToPath(uri))) : Option.none()

/**
 * One connection's file roots. A client that declares the `roots` capability is asked `roots/list` (once,
 * and again after `notifications/roots/list_changed`); its `file://` roots are where files may be read.
 * `--allow-dir` adds directories to them. A client without roots may read only the `--allow-dir` ones: never
 * the server's working directory implicitly (hosts start servers in `/` or the home directory). Roots that do
 * not exist are left out.
 */
export const makeFileRoots = (server: Server): Effect.Effect<FileRoots, RootsUnavailable, Settings | FileSystem.FileSystem> => {
  let listed: ReadonlyArray<string> | undefined
  // A change announced while a list is on its way makes that list stale: it is not kept.
  let generation = 0
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    generation++
    listed = undefined
    return Promise.resolve()
  })

  const clientRoots = Effect.gen(function*() {
    if (server.getClientCapabilities()?.roots === undefined) return undefined
    if (listed !== undefined) return listed
    const asked = generation
    const result = yield* Effect.tryPromise({
      try: (signal) => server.listRoots(undefined, { signal, timeout: ROOTS_TIMEOUT_MS }),
      catch: (e) =>
        new RootsUnavailable({
          message: `the client's roots could not be read (roots/list: ${
            e instanceof Error ? e.message : String(e)
          }), so no file can be attached`
        })
    })
    const dirs = result.roots.flatMap((root) => Option.toArray(pathOf(root.uri)))
    if (asked === generation) listed = dirs
    return dirs
  })

  return Effect.gen(function*() {
    const settings = yield* Settings
    const fs = yield* FileSystem.FileSystem
    const fromClient = yield* clientRoots
    const base = fromClient?.[0] ?? settings.allowDirs[0] ?? (yield* ProcessIo).cwd
    const dirs = [...(fromClient ?? []), ...settings.allowDirs]
    const real = yield* Effect.forEach(dirs, (dir) => fs.realPath(dir).pipe(Effect.option))
    return { base, allowed: Arr.dedupe(Arr.getSomes(real)) } satisfies FileRoots
  })
}
