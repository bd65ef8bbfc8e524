import { expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { runPipeline } from "../src/programs/runPipeline.js"
import { layerSettings } from "../src/services/Settings.js"
import { makeScriptedClient } from "./support/scriptedClient.js"
import { makeTestRunStore } from "./support/testRunStore.js"
import { makeTestSettings } from "./support/testSettings.js"

it.effect("dedupe synthesizes the same answer once", () =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({
      "test/alpha": [{ answer: "It is 4." }],
      "test/beta": [{ answer: "it is  4." }],
      "test/gamma": [{ answer: "Five." }],
      "test/synth": [{ answer: "4" }]
    })
    const store = makeTestRunStore()
    const layer = Layer.mergeAll(client.layer, store.layer, layerSettings(makeTestSettings({ strategy: "dedupe" })))
    const result = yield* runPipeline({ prompt: "2+2?" }).pipe(Effect.provide(layer))
    expect(result.manifest.strategy).toEqual({ name: "dedupe", dropped: ["test/beta"] })
    const synth = (yield* Ref.get(client.requests)).find((r) => r.model === "test/synth")!
    const text = JSON.stringify(synth.messages)
    expect(text).toContain("Five.")
    expect(text.match(/is 4/gi)).toHaveLength(1)
    console.log(JSON.stringify(result.manifest.strategy))
  }))
