import { Effect, Layer } from "effect"
import type { Manifest } from "../../src/domain/manifest.js"
import { responseFileName } from "../../src/domain/model.js"
import { type RunHandle, RunStore } from "../../src/services/runStore.js"

/**
 * The RunStore service's test layer: runs in memory, for tests that drive time with TestClock and want no
 * real I/O in between. `files` and `manifests` are what was written, for the test to read.
 */
export const makeTestRunStore = () => {
  const files = new Map<string, string>()
  const manifests: Array<Manifest> = []
  const attachments = new Map<string, Uint8Array>()
  let counter = 0
  const write = (run: RunHandle, relative: string, data: string) =>
    Effect.sync(() => {
      files.set(`${run.id}/${relative}`, data)
      return relative
    })
  const writeManifest = (run: RunHandle, manifest: Manifest) =>
    Effect.sync(() => {
      manifests.push(manifest)
      files.set(`${run.id}/run.json`, JSON.stringify(manifest))
      return "run.json"
    })
  const makeRunDir = Effect.sync(() => {
    const id = `run-${String(++counter).padStart(4, "0")}`
    return { id, dir: `/memory/${id}`, createdAt: new Date(0) }
  })
  const layer = Layer.succeed(
    RunStore,
    RunStore.make({
      root: "/memory",
      listRuns: () => Effect.succeed([]),
      readRunFile: (runId, file) => Effect.succeed(files.get(`${runId}/${file}`) ?? ""),
      readRun: (runId) =>
        Effect.sync(() => {
          const manifest = manifests.findLast((m) => m.id === runId)
          const answers = [...files.keys()].filter((k) => k.startsWith(`${runId}/responses/`)).map((k) => k.slice(runId.length + 1))
          return { id: runId, dir: `/memory/${runId}`, state: manifest ? "finished" : "running", manifest, owner: undefined, answers }
        }),
      hasRun: (runId) => Effect.sync(() => [...files.keys()].some((k) => k.startsWith(`${runId}/`))),
      readManifest: (runId) =>
        Effect.fromNullable(manifests.findLast((m) => m.id === runId)).pipe(Effect.orDieWith(() => new Error(`no manifest for ${runId}`))),
      createRun: () => makeRunDir,
      makeRunDir: () => makeRunDir,
      writeOwner: () => Effect.succeed("owner.json"),
      writePrompt: (run, prompt) => write(run, "prompt.md", prompt),
      writeAttachment: (run, name, bytes) =>
        Effect.sync(() => {
          attachments.set(`${run.id}/attachments/${name}`, bytes)
          return `attachments/${name}`
        }),
      readAttachment: (runId, name) => Effect.succeed(attachments.get(`${runId}/attachments/${name}`) ?? new Uint8Array()),
      writeResponse: (run, index, model, content, kind = "answer") =>
        write(run, responseFileName(index, model, kind === "partial" ? ".partial.md" : ".md"), content),
      writeStepFile: write,
      writeFinal: (run, content, manifest) =>
        Effect.zipRight(write(run, "final.md", content), writeManifest(run, manifest)).pipe(Effect.as("final.md")),
      writeManifest
    })
  )
  return { layer, files, manifests, attachments }
}
