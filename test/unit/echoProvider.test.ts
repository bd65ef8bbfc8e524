import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { RunEvent } from "../../src/programs/run/request.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"

import { echo } from "../support/echoProvider.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

const tempDir = makeTempDirs("parallel-llm-echo-")

// docs/extending.md's worked example: a provider is one file (test/support/echoProvider.ts) plus the one
// layer line `ModelClient.provider(echo)`; everything else (retries, progress, files, the manifest) is the run's.
describe("a provider in one file plus one layer line", () => {
  it("is the doc's text, word for word (its imports and doc comment aside), with the layer line appLayer.ts has", () => {
    const doc = fs.readFileSync("docs/extending.md", "utf8")
    const inDoc = /It took one new file, `src\/services\/providers\/echo\.ts`:\n\n```ts\n([\s\S]*?)\n```/.exec(doc)?.[1]
    const fixture = fs.readFileSync("test/support/echoProvider.ts", "utf8")
      .replace(/\/\*\*[\s\S]*?\*\/\n/, "")
      .replaceAll("../../src/domain/", "../../domain/")
    expect(inDoc).toBe(fixture.trimEnd())
    // The line the doc says to change is the one the application's layer has.
    expect(doc).toContain("in place of `ModelClient.Default`")
    expect(fs.readFileSync("src/appLayer.ts", "utf8")).toContain("\n    ModelClient.Default,\n")
  })

  /** A run's services over the echo provider: two candidates and a synthesizer, files in a directory of the test's own. */
  const echoRunLayer = () =>
    Layer.mergeAll(ModelClient.provider(echo), RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(makeTestSettings({ outputDir: tempDir(), models: ["echo/a", "echo/b"], synthesizer: "echo/s" }))),
      Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )

  it.live("a whole run through the echo provider: each answer is its stream of parts folded once", () =>
    Effect.gen(function*() {
      const layer = echoRunLayer()
      const deltas: Array<string> = []
      const onEvent = (event: RunEvent) =>
        Effect.sync(() => {
          if (event._tag === "CandidateDelta" && event.index === 0) deltas.push(event.text)
        })
      const result = yield* runPipeline({ prompt: "say it back to me", onEvent }).pipe(Effect.provide(layer))

      expect(result.manifest.status).toBe("ok")
      expect(fs.readFileSync(path.join(result.runDir, "responses/01-echo-a.md"), "utf8")).toBe("say it back to me")
      // One progress report per chunk of parts: here a word each.
      expect(deltas).toEqual(["say ", "it ", "back ", "to ", "me"])
      expect(result.manifest.candidates.map((c) => [c.servedBy, c.usage?.completionTokens])).toEqual([
        ["echo:echo/a", 5],
        ["echo:echo/b", 5]
      ])
      expect(result.manifest.synthesis?.servedBy).toBe("echo:echo/s")
      // The catalogue a run decides from is the provider's list, kept by ModelClient.
      const listed = yield* Effect.flatMap(ModelClient, (client) => client.catalogue).pipe(Effect.provide(ModelClient.provider(echo)))
      expect(listed.map((m) => m.id)).toEqual(["echo/any"])
    }))

  it.live("a run asked without deltas (a batch's) tells no piece of the answers, and keeps them whole", () =>
    Effect.gen(function*() {
      const layer = echoRunLayer()
      const told: Array<RunEvent["_tag"]> = []
      const onEvent = (event: RunEvent) => Effect.sync(() => told.push(event._tag))
      const result = yield* runPipeline({ prompt: "say it back to me", onEvent, deltas: false }).pipe(Effect.provide(layer))

      expect(result.manifest.status).toBe("ok")
      expect(fs.readFileSync(path.join(result.runDir, "responses/01-echo-a.md"), "utf8")).toBe("say it back to me")
      expect(told).not.toContain("CandidateDelta")
      expect(told).not.toContain("SynthesisDelta")
      expect(told).toContain("CandidateFinished")
      expect(told.at(-1)).toBe("RunFinished")
    }))
})
