import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Ref } from "effect"
import { REPORT_INSTRUCTIONS } from "../../src/programs/buildSynthesisPrompt.js"
import { pairsOf } from "../../src/programs/eval/evalPairs.js"
import { scorers } from "../../src/programs/eval/scorers.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { REPORT_DELIMITER, STRUCTURED_OUTPUT_PARAMETER } from "../../src/programs/synthesisReply.js"
import type { SettingsValue } from "../../src/settings/values.js"

import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { itClock } from "../support/itClock.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { runToEnd } from "../support/testClock.js"
import { makeTestSettings } from "../support/testSettings.js"

// The `reportVia` setting (issue 25, item 9): the answer is never generated inside JSON unless it is asked for,
// even where the catalogue says the synthesizer could; `off` asks for no report at all.

const tempDir = makeTempDirs("parallel-llm-report-via-")
const FINDINGS = {
  agreements: ["it is 4"],
  contradictions: [],
  uniqueClaims: [],
  confidence: "high",
  confidenceReason: "All agree."
}
const TEXT_REPLY = `It is 4.\n\n${REPORT_DELIMITER}\n${JSON.stringify(FINDINGS)}`

/** One run whose synthesizer the catalogue lists with structured output; what it was sent, and the manifest. */
const runWith = (overrides: Partial<SettingsValue>, reply: string) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient(
      { "test/alpha": [{ answer: "4" }], "test/beta": [{ answer: "four" }], "test/synth": [{ answer: reply }] },
      { answer: "unused" },
      [{ id: "test/synth", supportedParameters: [STRUCTURED_OUTPUT_PARAMETER] }]
    )
    const settings = makeTestSettings({ outputDir: tempDir(), models: ["test/alpha", "test/beta"], ...overrides })
    const layer = Layer.mergeAll(client.layer, RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(settings)),
      Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )
    const result = yield* runToEnd(runPipeline({ prompt: "What is 2+2?" })).pipe(Effect.provide(layer))
    const synth = (yield* Ref.get(client.requests)).find((r) => r.model === "test/synth")
    const system = synth?.messages[0]?.content
    return { result, synth, system: typeof system === "string" ? system : "" }
  })

describe("reportVia", () => {
  itClock.effect(
    "text by default, even where the synthesizer supports structured output: the answer is written freely",
    () =>
      Effect.gen(function*() {
        const { result, synth, system } = yield* runWith({}, TEXT_REPLY)
        expect(synth?.responseFormat).toBeUndefined()
        expect(system).toContain(REPORT_INSTRUCTIONS.text)
        expect(result.final).toBe("It is 4.")
        expect(result.manifest.report).toMatchObject({ status: "ok", via: "text", agreements: ["it is 4"] })
      })
  )

  itClock.effect("structured when asked for and supported: the reply is one JSON object", () =>
    Effect.gen(function*() {
      const { result, synth, system } = yield* runWith(
        { reportVia: "structured" },
        JSON.stringify({ answer: "It is 4.", ...FINDINGS })
      )
      expect(synth?.responseFormat?.name).toBe("synthesis")
      expect(system).toContain(REPORT_INSTRUCTIONS.structured)
      expect(result.final).toBe("It is 4.")
      expect(result.manifest.report).toMatchObject({ status: "ok", via: "structured" })
    }))

  itClock.effect("off: no report asked for, the whole reply is the answer", () =>
    Effect.gen(function*() {
      const { result, synth, system } = yield* runWith({ reportVia: "off" }, `It is 4.\n\n${REPORT_DELIMITER}\nnot parsed`)
      expect(synth?.responseFormat).toBeUndefined()
      expect(system).not.toContain(REPORT_DELIMITER)
      expect(system).not.toContain(REPORT_INSTRUCTIONS.structured)
      expect(result.final).toBe(`It is 4.\n\n${REPORT_DELIMITER}\nnot parsed`)
      expect(result.manifest.report).toEqual({ status: "unavailable", reason: "no report was asked for (reportVia off)" })
    }))

  it("is part of an eval result's fingerprint: a pass in another mode reuses nothing", () => {
    const items = [{
      id: "1",
      line: 1,
      question: "2+2?",
      answer: "4",
      candidates: [{ model: "a", content: "4" }, { model: "b", content: "5" }]
    }]
    const fingerprint = (reportVia: SettingsValue["reportVia"]) =>
      pairsOf(items, ["synthesize"], scorers.numeric, makeTestSettings({ reportVia }))[0]?.base.fingerprint
    expect(fingerprint("text")).toBe(fingerprint("text"))
    expect(fingerprint("text")).not.toBe(fingerprint("structured"))
    expect(fingerprint("off")).not.toBe(fingerprint("text"))
  })
})
