import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"
import { StoreError } from "../domain/errors.js"

/**
 * Where `npm run build` puts the run viewer's page: `dist/viewer.html` of the package. From this module's place,
 * dist/services/ once built (or bundled: the bundle keeps each module's URL) and src/services/ under the tests,
 * `../../dist` is the package's dist folder either way.
 */
const PAGE = new URL("../../dist/viewer.html", import.meta.url)
/** The page is about 20 KB; anything far past that is not the page the build wrote. */
const PAGE_MAX_BYTES = 4 * 1024 * 1024

const unreadable = (file: string, why: string) =>
  new StoreError({ path: file, message: `cannot read the viewer page ${file} (${why}): run npm run build` })

/**
 * The viewer page as built: opened once, checked as opened, read with a cap. `runs open` and `serve --http`'s /runs
 * read it when they start; the MCP App's `ui://` resource at each request (a rebuilt page is served at once).
 */
export const readViewerPage = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const file = fileURLToPath(PAGE)
  const bytes = yield* Effect.scoped(Effect.gen(function*() {
    const handle = yield* fs.open(file, { flag: "r" })
    const info = yield* handle.stat
    if (info.type !== "File" || Number(info.size) > PAGE_MAX_BYTES) return yield* unreadable(file, "not the built page")
    return yield* handle.readAlloc(info.size)
  })).pipe(Effect.catchTag("SystemError", "BadArgument", (e) => unreadable(file, e.message)))
  return new TextDecoder().decode(bytes._tag === "Some" ? bytes.value : new Uint8Array())
})
