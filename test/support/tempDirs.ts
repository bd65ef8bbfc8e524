import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

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
