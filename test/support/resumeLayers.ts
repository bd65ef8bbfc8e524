import { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { SystemError } from "@effect/platform/Error"
import { Effect, Layer, Logger } from "effect"
import { layerCallGate } from "../../src/services/CallGate.js"
import { layerOpenRouterClient } from "../../src/services/OpenRouterClient.js"
import { layerRunStore } from "../../src/services/RunStore.js"
import { layerSettings, type SettingsValue } from "../../src/services/Settings.js"
import { realHttpClientLayer } from "./realHttpClient.js"

// What the batch and eval resume tests run in-process on: the real client over loopback, the real run store,
// and a file system that may be told to fail as a full disk does.

/** The services of `batch` or `eval` for `settings`, over `fileSystem` (the node one by default). */
export const resumeLayerFor = (settings: SettingsValue, fileSystem: Layer.Layer<FileSystem.FileSystem> = NodeFileSystem.layer) =>
  Layer.mergeAll(layerOpenRouterClient, layerRunStore, layerCallGate(settings.concurrency)).pipe(
    Layer.provideMerge(Layer.mergeAll(layerSettings(settings), realHttpClientLayer, fileSystem, NodePath.layer)),
    Layer.merge(Logger.remove(Logger.defaultLogger))
  )

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
