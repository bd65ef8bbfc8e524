import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "vitest"

// What a command line's run left on disk, read as a test reads it (not in spawnCli.ts: vitest's globalSetup loads
// that one, where `expect` cannot be imported).

/** The one run directory a command line's output directory holds (a second one fails the test). */
export const onlyRunDir = (outputDir: string): string => {
  const runs = fs.readdirSync(outputDir)
  expect(runs).toHaveLength(1)
  return path.join(outputDir, runs[0]!)
}

/** A run's `run.json` as written: the fields a test reads by name, and every other one. */
export const readRunJson = (runDir: string): Record<string, unknown> & {
  id: string
  status: string
  candidates: Array<Record<string, unknown> & { model: string; status: string }>
  synthesis?: Record<string, unknown>
} => JSON.parse(fs.readFileSync(path.join(runDir, "run.json"), "utf8"))
