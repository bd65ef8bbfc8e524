import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { SystemError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { StrategyName } from "../../src/programs/strategies/registry.js"
import { layerCallGate } from "../../src/services/callGate.js"
import type { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { providerLayer } from "./withFakeProvider.js"

// What the batch and eval resume tests run in-process on: the real client over loopback (or a scripted one), the
// real run store, and a file system that may be told to fail as a full disk does.

/**
 * The services of `batch` or `eval` for `settings`, over `fileSystem` (the node one by default) and `client` (the HTTP
 * one over the provider at `settings.baseUrl` by default).
 */
export const resumeLayerFor = (
  settings: SettingsValue,
  fileSystem: Layer.Layer<FileSystem.FileSystem> = NodeFileSystem.layer,
  client?: Layer.Layer<ModelClient>
) => Layer.merge(providerLayer(settings, { fileSystem, ...(client !== undefined ? { client } : {}) }), layerCallGate(settings.concurrency))

/** The node file system, but every write to `file` through an open handle fails as a full disk does. */
export const fullDiskFor = (file: string) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (fs) => ({
      ...fs,
      open: (target: string, options?: FileSystem.OpenFileOptions) =>
        Effect.map(fs.open(target, options), (handle): FileSystem.File =>
          target !== file ? handle : Object.assign(Object.create(handle) as FileSystem.File, {
            writeAll: () =>
              Effect.fail(
                new SystemError({
                  reason: "Unknown",
                  module: "FileSystem",
                  method: "write",
                  description: "ENOSPC: no space left on device"
                })
              )
          }))
    }))
  ).pipe(Layer.provide(NodeFileSystem.layer))

/**
 * What `kill -9` during the synthesis leaves: the owner record of a dead process (of `strategy`), the prompt and
 * the candidates' answers (`[model, text]`, in order), recorded with the run settings a real run records.
 */
export const interruptedRun = async (
  settings: SettingsValue,
  question: string,
  answers: ReadonlyArray<readonly [string, string]>,
  strategy: StrategyName = "synthesize"
) => {
  const run = await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* RunStore
      // As a run records them (run/start.ts): a run of another temperature is no answer.
      const runSettings = {
        models: settings.models,
        synthesizer: settings.synthesizer,
        concurrency: 2,
        timeoutMs: 1000,
        retries: 0,
        temperature: settings.temperature
      }
      const run = yield* store.createRun(runSettings)
      yield* store.writeOwner(run, runSettings, undefined, undefined, strategy)
      yield* store.writePrompt(run, question)
      for (const [index, [model, text]] of answers.entries()) yield* store.writeResponse(run, index, model, text)
      return run
    }).pipe(Effect.provide(resumeLayerFor(settings)))
  )
  // This process's pid with another start time: its owner is gone.
  const ownerFile = path.join(run.dir, "owner.json")
  const owner = JSON.parse(fs.readFileSync(ownerFile, "utf8")) as Record<string, unknown>
  fs.writeFileSync(ownerFile, JSON.stringify({ ...owner, processStartedAt: "2000-01-01T00:00:00.000Z" }))
  return run
}
