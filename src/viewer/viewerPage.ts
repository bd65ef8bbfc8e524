import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"
import { StoreError } from "../domain/errors.js"

/** The page, built by `npm run build` beside the bundle (dist/viewer.html). */
const PAGE = new URL("../viewer.html", import.meta.url)

/** The viewer page, read once; fails naming the file and the fix when it was not built. */
export const readViewerPage = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const file = fileURLToPath(PAGE)
  return yield* fs.readFileString(file).pipe(
    Effect.mapError(() => new StoreError({ path: file, message: `cannot read the viewer page ${file}: run npm run build` }))
  )
})
