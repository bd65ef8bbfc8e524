import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import { freshDirs } from "./spawnCli.js"

/**
 * Fresh directories under the system's temp directory, named `prefix…`, all removed once the test file's
 * tests are done: a suite run again and again leaves nothing behind. Call it at the top of a test file.
 */
export const makeTempDirs = (prefix: string): () => string => {
  const made: Array<string> = []
  afterAll(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    made.push(dir)
    return dir
  }
}

/**
 * One temp directory for the whole test file (`root`), removed once its tests are done, and fresh directories
 * in it named for what they hold (`freshDir("ask")` is `root/ask-1`, then `root/ask-2`).
 */
export const tempRoot = (prefix: string): { readonly root: string; readonly freshDir: (name: string) => string } => {
  const root = makeTempDirs(prefix)()
  return { root, freshDir: freshDirs(root) }
}
