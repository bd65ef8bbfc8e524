import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { CandidateRecord } from "../../src/domain/manifest.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import type { Behavior } from "../support/fakeOpenRouter.js"
import { itClock } from "../support/itClock.js"
import { sharedHttpClientLayer } from "../support/realHttpClient.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { pendingSleeps } from "../support/testClock.js"
import { waitFor } from "../support/waitFor.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

const tempDir = makeTempDirs("parallel-llm-faults-")

// Every way a provider fails, scripted on the loopback fake for one candidate while another answers:
// the run must record the failure precisely, keep the good answer, and synthesize it.

const provider = withFakeProvider({ default: { kind: "ok" } })

const runAgainstFake = (faulty: Behavior | Array<Behavior>, overrides: Partial<SettingsValue> = {}) =>
  Effect.gen(function*() {
    provider.fake.setScript({
      "good/one": { kind: "ok", content: "the good answer" },
      "fault/x": faulty,
      "s/synth": { kind: "ok", content: "synthesized" }
    })
    provider.fake.reset()
    const settings = provider.settings({
      models: ["good/one", "fault/x"],
      synthesizer: "s/synth",
      outputDir: tempDir(),
      retries: 2,
      // The backoff is real time here (but in the tests on the TestClock): as short as it goes.
      retryBaseDelayMs: 1,
      timeoutMs: 10_000,
      stream: true,
      ...overrides
    })
    const layer = Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(settings)),
      Layer.provide(Layer.mergeAll(sharedHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logger.remove(Logger.defaultLogger))
    )
    const result = yield* runPipeline({ prompt: "fault injection" }).pipe(Effect.provide(layer))
    const faultyRecord = result.manifest.candidates[1]!
    // Whatever the fault, the good answer is kept and synthesized.
    expect(result.manifest.candidates[0]).toMatchObject({ status: "ok", file: "responses/01-good-one.md" })
    expect(fs.readFileSync(path.join(result.runDir, "responses/01-good-one.md"), "utf8")).toBe("the good answer")
    expect(result.final).toBe("synthesized")
    expect(result.manifest.synthesis?.status).toBe("ok")
    const requestsForFault = provider.fake.requests.filter((r) => r.model === "fault/x").length
    return { result, faultyRecord, requestsForFault }
  })

const expectFailure = (
  record: CandidateRecord,
  expected: { status?: string; tag: string; attempts: number; message: RegExp; httpStatus?: number }
) => {
  expect(record.status).toBe(expected.status ?? "error")
  expect(record.attempts).toBe(expected.attempts)
  expect(record.error?.tag).toBe(expected.tag)
  expect(record.error?.message).toMatch(expected.message)
  if (expected.httpStatus !== undefined) expect(record.error?.httpStatus).toBe(expected.httpStatus)
  expect(record.file).toBeUndefined()
}

describe("fault injection against the loopback fake (streaming)", () => {
  itClock.effect("429 with Retry-After: waits at least that long, then answers", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(runAgainstFake([
        { kind: "status", status: 429, retryAfter: 1 },
        { kind: "ok", content: "after the wait" }
      ]))
      // Besides the calls' 10 s budgets (and the good stream's 500 ms to end after its last part), the backoff, which
      // Retry-After stretches from 1 ms to 1 s: a backoff that ignored it would never show up here.
      const isBackoff = (ms: number) => ms > 500 && ms < 10_000
      const backoff = (yield* pendingSleeps((ahead) => ahead.some(isBackoff))).filter(isBackoff)
      expect(backoff).toEqual([1_000])
      expect(provider.fake.requests.filter((r) => r.model === "fault/x")).toHaveLength(1)
      yield* TestClock.adjust(1_000)
      const { result, faultyRecord, requestsForFault } = yield* Fiber.join(fiber)
      expect(faultyRecord).toMatchObject({ status: "ok", attempts: 2 })
      expect(requestsForFault).toBe(2)
      expect(result.manifest.status).toBe("ok")
    }))

  it.live("500 then success: retried once", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake([{ kind: "status", status: 500 }, { kind: "ok", content: "second time" }])
      expect(faultyRecord).toMatchObject({ status: "ok", attempts: 2, file: "responses/02-fault-x.md" })
    }))

  it.live("502 forever: retried until the retries run out", () =>
    Effect.gen(function*() {
      const { faultyRecord, requestsForFault, result } = yield* runAgainstFake({ kind: "status", status: 502 })
      expectFailure(faultyRecord, { tag: "ProviderFailure", attempts: 3, message: /^HTTP 502/, httpStatus: 502 })
      expect(requestsForFault).toBe(3)
      expect(result.manifest.status).toBe("partial")
    }))

  for (const [status, tag] of [[401, "Unauthorized"], [402, "OutOfCredits"], [403, "Forbidden"]] as const) {
    it.live(`${status}: ${tag}, never retried`, () =>
      Effect.gen(function*() {
        const { faultyRecord, requestsForFault } = yield* runAgainstFake({ kind: "status", status })
        expectFailure(faultyRecord, { tag, attempts: 1, message: new RegExp(`^HTTP ${status}`), httpStatus: status })
        expect(requestsForFault).toBe(1)
      }))
  }

  itClock.effect("a hang: the per-model timeout ends it and the request is aborted", () =>
    Effect.gen(function*() {
      const outputDir = tempDir()
      const fiber = yield* Effect.fork(runAgainstFake({ kind: "hang" }, { timeoutMs: 800, outputDir }))
      // The good answer written and the hanging request at the fake: only then does the clock reach the budgets.
      const goodAnswered = () =>
        fs.readdirSync(outputDir).some((run) => fs.existsSync(path.join(outputDir, run, "responses", "01-good-one.md")))
      yield* pendingSleeps((ahead) => ahead.includes(800) && goodAnswered() && provider.fake.inFlight === 1)
      yield* TestClock.adjust(800)
      const { faultyRecord } = yield* Fiber.join(fiber)
      expectFailure(faultyRecord, { status: "timeout", tag: "Timeout", attempts: 1, message: /Timed out after 0\.8 s/ })
      yield* Effect.promise(() =>
        waitFor("fault/x's request aborted", () => provider.fake.abortedRequests().some((r) => r.model === "fault/x"))
      )
    }))

  it.live("a connection reset: a network error, retried", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "reset" })
      expectFailure(faultyRecord, { tag: "NetworkError", attempts: 3, message: /Network error/ })
    }))

  it.live("malformed JSON: an invalid response, retried like a 5xx", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "malformed" })
      expectFailure(faultyRecord, { tag: "InvalidResponse", attempts: 3, message: /not a chat completion/ })
    }))

  it.live("an HTML error page from a proxy: says so, retried as a 502", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "html", status: 502 })
      expectFailure(faultyRecord, { tag: "ProviderFailure", attempts: 3, message: /HTML error page/, httpStatus: 502 })
    }))

  it.live("empty choices: an invalid response", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "emptyChoices" })
      expectFailure(faultyRecord, { tag: "InvalidResponse", attempts: 3, message: /no (choices|content)/ })
    }))

  it.live("null content: an invalid response", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "nullContent" })
      expectFailure(faultyRecord, { tag: "InvalidResponse", attempts: 3, message: /null|no content/ })
    }))

  it.live("an error inside an HTTP 200: a transient code is retried", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "errorIn200", code: 502, message: "Provider returned error" })
      expectFailure(faultyRecord, { tag: "ErrorInBody", attempts: 3, message: /Provider returned error/ })
    }))

  it.live("an error inside an HTTP 200 with a permanent code is not retried", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "errorIn200", code: 400, message: "context too long" })
      expectFailure(faultyRecord, { tag: "ErrorInBody", attempts: 1, message: /context too long/ })
    }))

  it.live("an error event mid-stream: a typed error, and the partial text kept as .partial.md", () =>
    Effect.gen(function*() {
      const { faultyRecord, result } = yield* runAgainstFake(
        { kind: "streamError", partial: "The first half of an answer", code: "server_error", message: "upstream died" },
        { retries: 0 }
      )
      expectFailure(faultyRecord, { tag: "ErrorInBody", attempts: 1, message: /mid-stream: upstream died/ })
      expect(faultyRecord.partialFile).toBe("responses/02-fault-x.partial.md")
      expect(fs.readFileSync(path.join(result.runDir, faultyRecord.partialFile!), "utf8")).toContain("The first half")
      // The broken answer is not given to the synthesizer.
      expect(result.manifest.synthesis?.labels).toEqual([{ label: "A", model: "good/one" }])
    }))

  it.live("a huge body: cut off at the cap with ResponseTooLarge, not retried", () =>
    Effect.gen(function*() {
      const { faultyRecord, requestsForFault } = yield* runAgainstFake({ kind: "huge", bytes: 2_000_000 }, { maxResponseBytes: 64 * 1024 })
      expectFailure(faultyRecord, { tag: "ResponseTooLarge", attempts: 1, message: /larger than 65,536 bytes/ })
      expect(requestsForFault).toBe(1)
    }))

  it.live("a huge body without streaming is cut off the same way", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({ kind: "huge", bytes: 2_000_000 }, { maxResponseBytes: 64 * 1024, stream: false })
      expectFailure(faultyRecord, { tag: "ResponseTooLarge", attempts: 1, message: /larger than/ })
    }))

  it.live("a slow trickling body: assembled whole", () =>
    Effect.gen(function*() {
      const { faultyRecord, result } = yield* runAgainstFake({
        kind: "trickle",
        content: "slowly but surely arriving",
        chunkDelayMs: 10,
        chunks: 6
      })
      expect(faultyRecord).toMatchObject({ status: "ok", attempts: 1 })
      expect(fs.readFileSync(path.join(result.runDir, "responses/02-fault-x.md"), "utf8")).toBe("slowly but surely arriving")
    }))

  it.live("the streamed answer's usage and served model come from the stream", () =>
    Effect.gen(function*() {
      const { faultyRecord } = yield* runAgainstFake({
        kind: "ok",
        content: "streamed",
        servedBy: "fault/x-served",
        usage: { prompt_tokens: 7, completion_tokens: 11, cost: 0.0042 }
      })
      expect(faultyRecord).toMatchObject({
        status: "ok",
        servedBy: "fault/x-served",
        usage: { promptTokens: 7, completionTokens: 11, cost: 0.0042 }
      })
      const request = provider.fake.requests.find((r) => r.model === "fault/x")
      expect(request?.body).toMatchObject({ stream: true })
    }))
})
