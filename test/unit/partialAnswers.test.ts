import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Logger, Option, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { InvalidResponse, NetworkError } from "../../src/domain/errors.js"
import { Manifest } from "../../src/domain/manifest.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import type { RunEvent, RunResult } from "../../src/programs/run/request.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { itClock } from "../support/itClock.js"
import { makeScriptedClient, type Step } from "../support/scriptedClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { advanceUntil } from "../support/testClock.js"
import { makeTestSettings } from "../support/testSettings.js"

const tempDir = makeTempDirs("pllm-partial-")

// Item 7 of issue 13: text a candidate already streamed is kept as its `.partial.md` whatever cuts the
// call: the deadline, the quorum, the per-model timeout, or an interruption (Ctrl-C, MCP cancel).

const pieces = ["Half ", "an ", "answer"]
const partialFile = "responses/02-test-beta.partial.md"

const layerFor = (overrides: Partial<SettingsValue>, beta: ReadonlyArray<Step> = [{ streamThenHang: pieces }]) =>
  makeScriptedClient({
    "test/alpha": [{ answer: "alpha answers" }],
    "test/beta": beta,
    "test/gamma": [{ hang: true }],
    "test/synth": [{ answer: "synthesized" }]
  }).pipe(
    Effect.map((client) =>
      Layer.mergeAll(client.layer, RunStore.DefaultWithoutDependencies).pipe(
        Layer.provideMerge(
          Settings.Test(makeTestSettings({ outputDir: tempDir(), ...overrides }))
        ),
        Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)),
        Layer.merge(Logger.remove(Logger.defaultLogger))
      )
    ),
    Layer.unwrapEffect
  )

const manifestIn = (runDir: string) =>
  Schema.decodeUnknownSync(Manifest)(JSON.parse(fs.readFileSync(path.join(runDir, "run.json"), "utf8")))

const expectPartialKept = (runDir: string, status: string) => {
  const manifest = manifestIn(runDir)
  expect(manifest.candidates[1]).toMatchObject({ model: "test/beta", status, partialFile })
  expect(fs.readFileSync(path.join(runDir, partialFile), "utf8")).toBe(pieces.join(""))
  return manifest
}

/** Beta's last piece of text has come (from the attempt that streams `pieces`). */
const betaStreamed = (e: RunEvent) => e._tag === "CandidateDelta" && e.index === 1 && e.text === "answer"
/** Beta's call has ended, however. */
const betaFinished = (e: RunEvent) => e._tag === "CandidateFinished" && e.outcome.model === "test/beta"

/**
 * A run on the TestClock whose time moves only once `ready` saw its event: the clock then goes `ms` on, what cuts
 * the calls still going (a grace, a deadline, a timeout), instead of that time passing for real.
 */
const runThenAdvance = <E>(
  run: (onEvent: (e: RunEvent) => Effect.Effect<void>) => Effect.Effect<RunResult, E>,
  ready: (e: RunEvent) => boolean,
  ms: number
) =>
  Effect.gen(function*() {
    const seen = yield* Deferred.make<void>()
    const fiber = yield* Effect.fork(run((e) => (ready(e) ? Deferred.succeed(seen, undefined) : Effect.void)))
    yield* Deferred.await(seen)
    yield* TestClock.adjust(ms)
    return yield* Fiber.join(fiber)
  })

describe("text streamed before a call is cut", () => {
  itClock.effect("is kept when the quorum ends the wait", () =>
    Effect.gen(function*() {
      const result = yield* runThenAdvance(
        (onEvent) =>
          runPipeline({ prompt: "p", onEvent }).pipe(withCallSettings({ quorum: 1, grace: 0.05 })).pipe(Effect.provide(layerFor({}))),
        betaStreamed,
        50
      )
      expect(expectPartialKept(result.runDir, "cancelled").candidates[1]!.reason).toBe("quorum")
    }))

  itClock.effect("is kept when the deadline ends the wait", () =>
    Effect.gen(function*() {
      // The cut: the deadline less the synthesis's reserve, 200 ms.
      const result = yield* runThenAdvance(
        (onEvent) =>
          runPipeline({ prompt: "p", onEvent }).pipe(withCallSettings({ deadline: 0.3 })).pipe(
            Effect.provide(layerFor({ synthesisReserveMs: Option.some(100) }))
          ),
        betaStreamed,
        200
      )
      expect(expectPartialKept(result.runDir, "cancelled").candidates[1]!.reason).toBe("deadline")
    }))

  itClock.effect("is kept when the model's timeout runs out", () =>
    Effect.gen(function*() {
      const result = yield* runThenAdvance(
        (onEvent) => runPipeline({ prompt: "p", onEvent }).pipe(Effect.provide(layerFor({ timeoutMs: 200, retries: 0 }))),
        betaStreamed,
        200
      )
      expectPartialKept(result.runDir, "timeout")
    }))

  it.live("is kept when the run is interrupted", () =>
    Effect.gen(function*() {
      const runDir = yield* Deferred.make<string>()
      const streamed = yield* Deferred.make<void>()
      const fiber = yield* runPipeline({
        prompt: "p",
        onEvent: (e) =>
          e._tag === "RunStarted"
            ? Deferred.succeed(runDir, e.run.dir)
            : e._tag === "CandidateDelta" && e.index === 1 && e.text === "answer"
            ? Deferred.succeed(streamed, undefined)
            : Effect.void
      }).pipe(Effect.provide(layerFor({})), Effect.fork)
      yield* Deferred.await(streamed)
      yield* Fiber.interrupt(fiber)
      const manifest = expectPartialKept(yield* Deferred.await(runDir), "cancelled")
      expect(manifest.status).toBe("cancelled")
      expect(manifest.candidates[1]!.reason).toBe("interrupted")
      expect(manifest.candidates[2]).toMatchObject({ status: "cancelled", reason: "interrupted" })
      expect(manifest.candidates[2]!.partialFile).toBeUndefined()
    }))

  // The text lives in the one fold of each attempt (src/programs/answerFold.ts): a retry starts it again.
  itClock.effect("is the last attempt's alone when a retry streamed again", () =>
    Effect.gen(function*() {
      const reset = new NetworkError({ model: "test/beta", message: "Network error: reset" })
      const streamed = yield* Deferred.make<void>()
      const fiber = yield* runPipeline({
        prompt: "p",
        onEvent: (e) => betaStreamed(e) ? Deferred.succeed(streamed, undefined) : Effect.void
      })
        .pipe(
          Effect.provide(layerFor({ timeoutMs: 500, retries: 1, retryBaseDelayMs: 1 }, [
            { streamThenFail: ["A first try ", "that broke"], fail: reset },
            { streamThenHang: pieces }
          ])),
          Effect.fork
        )
      // The clock moves a millisecond at a time through the retry's backoff until the second attempt has streamed,
      // then on past the 500 ms timeout.
      yield* advanceUntil(Deferred.isDone(streamed))
      yield* TestClock.adjust(500)
      const result = yield* Fiber.join(fiber)
      expect(expectPartialKept(result.runDir, "timeout").candidates[1]!.attempts).toBe(2)
    }))

  itClock.effect("is kept when the answer breaks off with an error, whatever its type", () =>
    Effect.gen(function*() {
      const invalid = new InvalidResponse({ model: "test/beta", message: "Invalid stream chunk: {", httpStatus: 200 })
      // Gamma hangs until its timeout: the clock moves once beta has failed.
      const result = yield* runThenAdvance(
        (onEvent) =>
          runPipeline({ prompt: "p", onEvent }).pipe(
            Effect.provide(layerFor({ retries: 0, timeoutMs: 300 }, [{ streamThenFail: pieces, fail: invalid }]))
          ),
        betaFinished,
        300
      )
      expect(expectPartialKept(result.runDir, "error").candidates[1]!.error?.tag).toBe("InvalidResponse")
    }))
})
