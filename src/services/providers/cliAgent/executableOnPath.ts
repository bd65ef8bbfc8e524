import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import { access, constants } from "node:fs/promises"

// Whether a CLI can be started, learnt without starting it: a missing CLI used to cost a fork of this (large)
// process per probe and per call only for the spawn to fail with ENOENT.

/** Where the spawn looks when the child's environment has no PATH (glibc's `_PATH_DEFPATH`, which libuv uses). */
const DEFAULT_PATH = "/usr/bin:/bin"

/** A regular file this user may execute: what execve needs (a directory or a file without `x` fails with EACCES). */
const isExecutableFile = (fs: FileSystem.FileSystem, file: string) =>
  Effect.gen(function*() {
    const info = yield* fs.stat(file)
    if (info.type !== "File") return false
    // The platform's `access` cannot ask for X_OK.
    yield* Effect.tryPromise(() => access(file, constants.X_OK))
    return true
  }).pipe(Effect.orElseSucceed(() => false))

/** `file` as the child sees it: relative to its working directory `cwd`. */
const inDirectory = (cwd: string, file: string) => (file.startsWith("/") ? file : `${cwd}/${file}`)

/**
 * The file a spawn of `name` with environment `env` in directory `cwd` would run, found the way libuv's execvp does
 * it: a name with a `/` is that path; a bare name is tried in each entry of `env`'s PATH (not this process's) in
 * order, an empty entry meaning `cwd` and a relative one relative to it; the first regular file the user may execute
 * wins. None: the spawn would fail, so there is no need to start it. On Windows (another search, with PATHEXT) the
 * name itself, for the spawn to decide.
 */
export const executableOnPath = (
  name: string,
  env: Readonly<Record<string, string>>,
  cwd: string
): Effect.Effect<Option.Option<string>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (process.platform === "win32") return Option.some(name)
    const fs = yield* FileSystem.FileSystem
    const candidates = name.includes("/")
      ? [name]
      : (env["PATH"] ?? DEFAULT_PATH).split(":").map((entry) => (entry === "" ? name : `${entry}/${name}`))
    for (const candidate of candidates) {
      const file = inDirectory(cwd, candidate)
      if (yield* isExecutableFile(fs, file)) return Option.some(file)
    }
    return Option.none()
  })
