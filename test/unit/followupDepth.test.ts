import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { continueRun } from "../../src/programs/thread/continueRun.js"
import { RunStore } from "../../src/services/runStore.js"
import { failureOf } from "../support/failureOf.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// A follow-up of a thread longer than --follow-up-max-turns is refused from the count of its runs (their
// manifests' parent links), before any turn is read: at the default 50 it read every turn first. Each run's
// manifest is read once: the one its link was followed by is the one its turn is built from.

const provider = withFakeProvider({ script: { "fd/synth": { kind: "ok", content: "FINAL" } } })
const tempDir = makeTempDirs("pllm-followup-depth-")

/**
 * The run store over the provider's settings, noting every run read (readRun) and run file read in `reads`,
 * and in `manifests` the id of every read of a run.json (readManifest, readRun, or readRunFile of it).
 */
const countingLayer = (reads: Array<string>, manifests: Array<string> = []) => {
  const base = provider.layer({ outputDir: path.join(tempDir(), "runs"), models: ["fd/one"], synthesizer: "fd/synth", retries: 0 })
  const counting = Layer.effect(
    RunStore,
    Effect.map(RunStore, (store) =>
      RunStore.make({
        ...store,
        readManifest: (runId) => Effect.zipRight(Effect.sync(() => manifests.push(runId)), store.readManifest(runId)),
        readRun: (runId) => Effect.zipRight(Effect.sync(() => (reads.push(`${runId}/`), manifests.push(runId))), store.readRun(runId)),
        readRunFile: (runId, file) =>
          Effect.zipRight(
            Effect.sync(() => (reads.push(`${runId}/${file}`), file === "run.json" ? manifests.push(runId) : 0)),
            store.readRunFile(runId, file)
          )
      }))
  ).pipe(Layer.provide(base))
  return Layer.merge(base, counting)
}

/** `depth` runs on disk, each a copy of `first` following up on the one before; the newest run's id. */
const chainOf = (first: { readonly runDir: string; readonly manifest: { readonly id: string } }, depth: number) => {
  const root = path.dirname(first.runDir)
  const manifest: unknown = JSON.parse(fs.readFileSync(path.join(first.runDir, "run.json"), "utf8"))
  let parent = first.manifest.id
  for (let n = 1; n < depth; n++) {
    const id = `20300101-000000-000-${n.toString(16).padStart(8, "0")}`
    fs.mkdirSync(path.join(root, id))
    for (const file of ["prompt.md", "final.md"]) fs.copyFileSync(path.join(first.runDir, file), path.join(root, id, file))
    fs.writeFileSync(path.join(root, id, "run.json"), JSON.stringify({ ...(manifest as object), id, parent }))
    parent = id
  }
  return parent
}

describe("a follow-up of a thread too long", () => {
  const reads: Array<string> = []
  it.live("is refused from the count of its runs, none of its turns read", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      const newest = chainOf(first, 60)
      reads.length = 0
      const refused = yield* failureOf(continueRun(newest, { prompt: "more?" }))
      expect(refused.message).toMatch(new RegExp(`^cannot continue run ${newest}: its thread holds more than 50 turns`))
      expect(reads).toEqual([])
    }).pipe(Effect.provide(countingLayer(reads))))
})

describe("a follow-up", () => {
  const reads: Array<string> = []
  const manifests: Array<string> = []
  it.live("reads each earlier run's manifest once", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      const newest = chainOf(first, 4)
      manifests.length = 0
      const next = yield* continueRun(newest, { prompt: "more?" })
      const thread = [first.manifest.id, ...[1, 2, 3].map((n) => `20300101-000000-000-${n.toString(16).padStart(8, "0")}`)]
      expect(next.manifest.parent).toBe(newest)
      expect(manifests.filter((id) => thread.includes(id)).sort()).toEqual([...thread].sort())
    }).pipe(Effect.provide(countingLayer(reads, manifests))))
})
