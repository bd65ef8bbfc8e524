import { describe, expect } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, TestClock } from "effect"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { itClock } from "../support/itClock.js"
import { makeScriptedClient, type Step } from "../support/scriptedClient.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"

// The original's run C, in seconds: the five candidates and the synthesis.
const profile: Record<string, ReadonlyArray<Step>> = {
  "p/codestral": [{ answer: "codestral", delayMs: 8_600 }],
  "p/gemini": [{ answer: "gemini", delayMs: 57_700 }],
  "p/gpt": [{ answer: "gpt", delayMs: 75_900 }],
  "p/grok": [{ answer: "grok", delayMs: 81_700 }],
  "p/glm": [{ answer: "glm", delayMs: 98_100 }],
  "p/synth": [{ answer: "merged", delayMs: 49_000 }]
}
const models = Object.keys(profile).filter((m) => m !== "p/synth")

/** Runs the pipeline on the TestClock and returns the manifest (time jumps straight to the end). */
const runWith = (overrides: Partial<SettingsValue>, script = profile) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient(script)
    const store = makeTestRunStore()
    const settings = makeTestSettings({ models, synthesizer: "p/synth", ...overrides })
    const layer = Layer.mergeAll(client.layer, store.layer, Settings.Test(settings))
    const fiber = yield* runPipeline({ prompt: "p" }).pipe(Effect.provide(layer), Effect.fork)
    yield* TestClock.adjust(1_000_000)
    const result = yield* Fiber.join(fiber)
    return result.manifest
  })

const statuses = (manifest: { candidates: ReadonlyArray<{ model: string; status: string; reason?: string | undefined }> }) =>
  Object.fromEntries(manifest.candidates.map((c) => [c.model, c.reason ? `${c.status}:${c.reason}` : c.status]))

describe("run policies on the TestClock", () => {
  itClock.effect("by default waits for every candidate", () =>
    Effect.gen(function*() {
      const manifest = yield* runWith({})
      expect(manifest.status).toBe("ok")
      expect(manifest.durationMs).toBe(98_100 + 49_000)
    }))

  itClock.effect("quorum 3 with 10 s grace: stops waiting 10 s after the third answer", () =>
    Effect.gen(function*() {
      const manifest = yield* runWith({ quorum: Option.some(3), graceMs: 10_000 })
      expect(statuses(manifest)).toEqual({
        "p/codestral": "ok",
        "p/gemini": "ok",
        "p/gpt": "ok",
        "p/grok": "ok", // 81.7 s < 75.9 + 10
        "p/glm": "cancelled:quorum"
      })
      expect(manifest.candidates[4]!.latencyMs).toBe(85_900)
      expect(manifest.status).toBe("partial")
      expect(manifest.durationMs).toBe(85_900 + 49_000)
      expect(manifest.synthesis?.labels).toHaveLength(4)
    }))

  itClock.effect("quorum with no grace stops at once", () =>
    Effect.gen(function*() {
      const manifest = yield* runWith({ quorum: Option.some(2), graceMs: 0 })
      expect(Object.values(statuses(manifest))).toEqual(["ok", "ok", "cancelled:quorum", "cancelled:quorum", "cancelled:quorum"])
      expect(manifest.durationMs).toBe(57_700 + 49_000)
    }))

  itClock.effect("a deadline cuts the stragglers and keeps the synthesis within it", () =>
    Effect.gen(function*() {
      // 150 s, 40 % reserved for the synthesis: candidates until 90 s.
      const manifest = yield* runWith({ deadlineMs: Option.some(150_000) })
      expect(statuses(manifest)).toEqual({
        "p/codestral": "ok",
        "p/gemini": "ok",
        "p/gpt": "ok",
        "p/grok": "ok",
        "p/glm": "cancelled:deadline"
      })
      expect(manifest.durationMs).toBe(90_000 + 49_000)
      expect(manifest.durationMs).toBeLessThanOrEqual(150_000)
    }))

  itClock.effect("a deadline too short for the synthesis still ends on time, with the first answer", () =>
    Effect.gen(function*() {
      const manifest = yield* runWith({ deadlineMs: Option.some(55_000), fallbackSynthesizers: ["p/backup"] }, {
        ...profile,
        "p/backup": [{ answer: "backup", delayMs: 40_000 }]
      })
      // Candidates until 33 s, then 22 s left: the synthesizer times out, no time remains for the backup.
      expect(Object.values(statuses(manifest))).toEqual([
        "ok",
        "cancelled:deadline",
        "cancelled:deadline",
        "cancelled:deadline",
        "cancelled:deadline"
      ])
      expect(manifest.durationMs).toBe(55_000)
      expect(manifest.status).toBe("partial")
      expect(manifest.synthesis).toMatchObject({ status: "timeout", fallbackToCandidate: "p/codestral" })
      expect(manifest.synthesis?.failedSynthesizers?.map((f) => f.model)).toEqual(["p/synth", "p/backup"])
    }))

  itClock.effect("the synthesis reserve is a setting", () =>
    Effect.gen(function*() {
      const manifest = yield* runWith({ deadlineMs: Option.some(140_000), synthesisReserveMs: Option.some(50_000) })
      expect(statuses(manifest)["p/grok"]).toBe("ok")
      expect(statuses(manifest)["p/glm"]).toBe("cancelled:deadline")
      expect(manifest.durationMs).toBe(90_000 + 49_000)
    }))
})
