import { Effect, Layer } from "effect"
import type { Manifest } from "../../src/domain/manifest.js"
import { responseFileName } from "../../src/domain/model.js"
import { type RunHandle, RunStore } from "../../src/services/RunStore.js"

/** An in-memory run store: for tests that drive time with TestClock and want no real I/O in between. */
export const makeMemoryRunStore = () => {
  const files = new Map<string, string>()
  const manifests: Array<Manifest> = []
  let counter = 0
  const write = (run: RunHandle, relative: string, data: string) =>
    Effect.sync(() => {
      files.set(`${run.id}/${relative}`, data)
      return relative
    })
  const layer = Layer.succeed(
    RunStore,
    RunStore.of({
      root: "/memory",
      listRuns: () => Effect.succeed([]),
      readRunFile: (runId, file) => Effect.succeed(files.get(`${runId}/${file}`) ?? ""),
      readManifest: (runId) =>
        Effect.fromNullable(manifests.findLast((m) => m.id === runId)).pipe(Effect.orDieWith(() => new Error(`no manifest for ${runId}`))),
      createRun: (prompt) =>
        Effect.sync(() => {
          const id = `run-${String(++counter).padStart(4, "0")}`
          const run = { id, dir: `/memory/${id}`, createdAt: new Date(0) }
          files.set(`${id}/prompt.md`, prompt)
          return run
        }),
      writeResponse: (run, index, model, content) => write(run, responseFileName(index, model), content),
      writeFinal: (run, content) => write(run, "final.md", content),
      writeManifest: (run, manifest) =>
        Effect.sync(() => {
          manifests.push(manifest)
          files.set(`${run.id}/run.json`, JSON.stringify(manifest))
          return "run.json"
        })
    })
  )
  return { layer, files, manifests }
}
