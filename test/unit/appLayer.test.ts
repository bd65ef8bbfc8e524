import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { appLayer } from "../../src/appLayer.js"
import { type LogEntry, Logging } from "../../src/services/logging.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { itLive } from "../support/itLive.js"
import { layerTestLogging } from "../support/testLogging.js"
import { makeTestSettings } from "../support/testSettings.js"

describe("AppLayer", () => {
  itLive.scoped("builds every service from the settings once, for one entry point", () =>
    Effect.gen(function*() {
      const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-app-"))
      const settings = Settings.make(makeTestSettings({ outputDir }))
      const services = yield* Layer.build(appLayer(Layer.succeed(Settings, settings)))
      const store = yield* Effect.provide(RunStore, services)
      expect(store.root).toBe(outputDir)
      expect(yield* Effect.provide(Settings, services)).toBe(settings)
      fs.rmSync(outputDir, { recursive: true, force: true })
    }).pipe(Effect.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer))))
})

describe("Logging", () => {
  itLive.effect("a sink added at run time gets every line until its scope closes", () => {
    const all: Array<LogEntry> = []
    return Effect.gen(function*() {
      const added: Array<string> = []
      yield* Effect.scoped(
        Effect.gen(function*() {
          const logging = yield* Logging
          yield* logging.addSink((entry) => added.push(entry.text))
          yield* Effect.logInfo("while added")
        })
      )
      yield* Effect.logInfo("after")
      expect(added).toEqual(["while added"])
      expect(all.map((e) => e.text)).toEqual(["while added", "after"])
    }).pipe(Effect.provide(layerTestLogging(all)))
  })
})
