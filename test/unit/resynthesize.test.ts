import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { BadRequest } from "../../src/domain/errors.js"
import { resynthesize } from "../../src/programs/resynthesize.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { failureOf } from "../support/failureOf.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

const tempDir = makeTempDirs("parallel-llm-resynth-")

const setup = Effect.gen(function*() {
  const client = yield* makeScriptedClient({
    "test/alpha": [{ answer: "alpha's answer", cost: 0.01 }],
    "test/beta": [{ fail: new BadRequest({ model: "test/beta", message: "HTTP 400", httpStatus: 400 }) }],
    "test/gamma": [{ answer: "gamma's answer", cost: 0.01 }],
    "test/synth": [{ answer: "first synthesis", cost: 0.01 }],
    "test/judge": [{ answer: "second synthesis", cost: 0.02 }]
  })
  const settings = makeTestSettings({ outputDir: tempDir() })
  const layer = Layer.mergeAll(client.layer, RunStore.DefaultWithoutDependencies).pipe(
    Layer.provideMerge(Settings.Test(settings)),
    Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)),
    Layer.merge(Logger.remove(Logger.defaultLogger))
  )
  return { client, layer }
})

describe("resynthesize", () => {
  it.live("synthesizes a past run's answers again into a new run that names its source, asking no candidate", () =>
    Effect.gen(function*() {
      const { client, layer } = yield* setup
      const first = yield* runPipeline({ prompt: "the question" }).pipe(Effect.provide(layer))
      yield* Ref.set(client.requests, [])

      const again = yield* resynthesize({ runId: first.manifest.id, synthesizer: "test/judge" }).pipe(Effect.provide(layer))
      expect(again.final).toBe("second synthesis")
      expect(again.runDir).not.toBe(first.runDir)
      expect(again.manifest.source).toBe(first.manifest.id)
      expect(again.manifest.synthesis).toMatchObject({ model: "test/judge", status: "ok" })
      expect(again.manifest.candidates.map((c) => c.status)).toEqual(["ok", "error", "ok"])
      expect(again.manifest.status).toBe("partial")
      expect(again.manifest.usage.cost).toBeCloseTo(0.02)
      expect((yield* Ref.get(client.requests)).map((r) => r.model)).toEqual(["test/judge"])
      expect(fs.readFileSync(path.join(again.runDir, "responses/01-test-alpha.md"), "utf8")).toBe("alpha's answer")
      expect(fs.readFileSync(path.join(again.runDir, "prompt.md"), "utf8")).toBe("the question")
      // The source is untouched.
      expect(fs.readFileSync(path.join(first.runDir, "final.md"), "utf8")).toBe("first synthesis")

      // Newest first in the listing, with the manifests.
      const listed = yield* RunStore.pipe(Effect.flatMap((store) => store.listRuns(10)), Effect.provide(layer))
      expect(listed.map((r) => r.id)).toEqual([again.manifest.id, first.manifest.id])
      expect(listed[0]!.manifest?.source).toBe(first.manifest.id)
    }))

  it.live("keeps the source's synthesizer when none is named, and refuses an unknown run", () =>
    Effect.gen(function*() {
      const { layer } = yield* setup
      const first = yield* runPipeline({ prompt: "q" }).pipe(Effect.provide(layer))
      const again = yield* resynthesize({ runId: first.manifest.id }).pipe(Effect.provide(layer))
      expect(again.manifest.synthesis?.model).toBe("test/synth")

      const unknown = yield* resynthesize({ runId: "20200101-000000-000-00000000" }).pipe(Effect.provide(layer), failureOf)
      expect(unknown._tag).toBe("RunRefused")
      expect(unknown.message).toMatch(/no run 20200101-000000-000-00000000/)
      const malformed = yield* resynthesize({ runId: "../etc" }).pipe(Effect.provide(layer), failureOf)
      expect(malformed.message).toMatch(/is not a run id/)
    }))
})
