import { describe, expect } from "@effect/vitest"
import { Cause, Clock, Effect, Either, Exit, Fiber, Layer, Logger, LogLevel, Option, Random, Ref, TestClock } from "effect"
import { ProviderFailure, RateLimited, Unauthorized } from "../../src/domain/errors.js"
import { callModel } from "../../src/programs/callModel.js"
import { CallGate, makeCallGate } from "../../src/services/callGate.js"
import { itClock } from "../support/itClock.js"
import { makeScriptedClient, type Step } from "../support/scriptedClient.js"

const request = { model: "m/x", messages: [{ role: "user" as const, content: "hi" }] }
const serverError = (status = 500) => ({ fail: new ProviderFailure({ model: "m/x", message: `HTTP ${status}`, httpStatus: status }) })

/** Starts callModel in a fiber on the TestClock and returns handles to drive and observe it. */
const start = (steps: ReadonlyArray<Step>, policy: { retries: number; retryBaseDelayMs: number; timeoutMs: number }) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({ "m/x": steps })
    const fiber = yield* callModel(request, policy).pipe(Effect.provide(client.layer), Effect.fork)
    const sent = () => Ref.get(client.requests).pipe(Effect.map((r) => r.length))
    // Let the fiber run up to its first sleep.
    yield* TestClock.adjust(0)
    return { client, fiber, sent }
  })

/** The call's result, which must be there already: a call still running fails the test at once instead of hanging it. */
const finished = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Fiber.poll(fiber).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage("the call is still running"), onSome: (exit) => exit }))
  )

/** How long until the earliest sleep ends: the backoff before the next retry (the call's time budget ends later). */
const nextSleepIn = Effect.gen(function*() {
  yield* TestClock.adjust(0)
  const sleeps = yield* TestClock.sleeps()
  return Math.min(...sleeps) - (yield* Clock.currentTimeMillis)
})

describe("callModel: retry, backoff, Retry-After and timeout (TestClock)", () => {
  itClock.effect("retries transient failures with exponential backoff and jitter, then answers", () =>
    Effect.gen(function*() {
      const { fiber, sent } = yield* start([serverError(500), serverError(502), { answer: "ok" }], {
        retries: 3,
        retryBaseDelayMs: 1000,
        timeoutMs: 60_000
      })
      expect(yield* sent()).toBe(1)
      // Jitter puts the first delay within 0.8–1.2 × 1 s, and (with this seed) away from 1 s itself.
      const first = yield* nextSleepIn
      expect(first).toBeGreaterThanOrEqual(800)
      expect(first).toBeLessThanOrEqual(1200)
      expect(Math.abs(first - 1000)).toBeGreaterThan(1)
      yield* TestClock.adjust(first - 1)
      expect(yield* sent()).toBe(1)
      yield* TestClock.adjust(1)
      expect(yield* sent()).toBe(2)
      // The second delay doubles, with its own jitter: within 1.6–2.4 s, not twice the first.
      const second = yield* nextSleepIn
      expect(second).toBeGreaterThanOrEqual(1600)
      expect(second).toBeLessThanOrEqual(2400)
      expect(Math.abs(second - 2 * first)).toBeGreaterThan(1)
      yield* TestClock.adjust(second)
      expect(yield* sent()).toBe(3)
      const call = yield* finished(fiber)
      expect(call.attempts).toBe(3)
      expect(Either.isRight(call.result) && call.result.right.content).toBe("ok")
      expect(call.latencyMs).toBeCloseTo(first + second, 6)
    }).pipe(Effect.withRandom(Random.make("jitter"))))

  itClock.effect(
    "each failed attempt is told at debug level, the retried ones as well as the first, with its number",
    () =>
      Effect.gen(function*() {
        const lines: Array<string> = []
        const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => lines.push(String(message))))
        const client = yield* makeScriptedClient({ "m/x": [serverError(500), serverError(502), serverError(503)] })
        const fiber = yield* callModel(request, { retries: 2, retryBaseDelayMs: 10, timeoutMs: 60_000 }).pipe(
          Effect.provide(Layer.merge(client.layer, capture)),
          Logger.withMinimumLogLevel(LogLevel.Debug),
          Effect.fork
        )
        yield* TestClock.adjust(10_000)
        const call = yield* finished(fiber)
        expect(call.attempts).toBe(3)
        expect(lines).toEqual([
          "m/x: attempt 1 failed: HTTP 500 (will retry)",
          "m/x: attempt 2 failed: HTTP 502 (will retry)",
          "m/x: attempt 3 failed: HTTP 503"
        ])
      })
  )

  itClock.effect("never retries sooner than Retry-After", () =>
    Effect.gen(function*() {
      const { fiber, sent } = yield* start(
        [{ fail: new RateLimited({ model: "m/x", message: "HTTP 429", httpStatus: 429, retryAfterMs: 30_000 }) }, { answer: "ok" }],
        { retries: 3, retryBaseDelayMs: 1000, timeoutMs: 120_000 }
      )
      yield* TestClock.adjust(29_900)
      expect(yield* sent()).toBe(1)
      yield* TestClock.adjust(200)
      expect(yield* sent()).toBe(2)
      const call = yield* finished(fiber)
      expect(call.attempts).toBe(2)
      expect(Either.isRight(call.result)).toBe(true)
    }))

  itClock.effect("uses the backoff when it is longer than Retry-After", () =>
    Effect.gen(function*() {
      const { fiber, sent } = yield* start(
        [{ fail: new RateLimited({ model: "m/x", message: "HTTP 429", httpStatus: 429, retryAfterMs: 100 }) }, { answer: "ok" }],
        { retries: 3, retryBaseDelayMs: 5000, timeoutMs: 120_000 }
      )
      yield* TestClock.adjust(3_900)
      expect(yield* sent()).toBe(1)
      yield* TestClock.adjust(2_200)
      expect(yield* sent()).toBe(2)
      expect((yield* finished(fiber)).attempts).toBe(2)
    }))

  itClock.effect("never retries a permanent failure", () =>
    Effect.gen(function*() {
      const { fiber, sent } = yield* start(
        [{ fail: new Unauthorized({ model: "m/x", message: "HTTP 401", httpStatus: 401 }) }, { answer: "never" }],
        { retries: 5, retryBaseDelayMs: 10, timeoutMs: 60_000 }
      )
      yield* TestClock.adjust(60_000)
      const call = yield* finished(fiber)
      expect(yield* sent()).toBe(1)
      expect(call.attempts).toBe(1)
      expect(Either.isLeft(call.result) && call.result.left._tag).toBe("Unauthorized")
    }))

  itClock.effect("stops after `retries` retries and reports the last failure", () =>
    Effect.gen(function*() {
      const { fiber, sent } = yield* start([serverError(503)], { retries: 2, retryBaseDelayMs: 100, timeoutMs: 60_000 })
      yield* TestClock.adjust(10_000)
      const call = yield* finished(fiber)
      expect(yield* sent()).toBe(3)
      expect(call.attempts).toBe(3)
      const error = Either.isLeft(call.result) ? call.result.left : undefined
      expect(error?._tag).toBe("ProviderFailure")
      expect(error && "httpStatus" in error ? error.httpStatus : undefined).toBe(503)
    }))

  itClock.effect("bounds the whole call, retries included, by the timeout", () =>
    Effect.gen(function*() {
      const { fiber, sent } = yield* start([{ ...serverError(500), delayMs: 1500 }], {
        retries: 100,
        retryBaseDelayMs: 1000,
        timeoutMs: 5_000
      })
      yield* TestClock.adjust(4_999)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust(2)
      const call = yield* finished(fiber)
      expect(Either.isLeft(call.result) && call.result.left._tag).toBe("Timeout")
      expect(call.latencyMs).toBe(5_000)
      expect(call.attempts).toBe(yield* sent())
      expect(call.attempts).toBeGreaterThanOrEqual(2)
    }))

  itClock.effect(
    "starts the time budget when the first request goes out, not while the call waits for a permit",
    () =>
      Effect.gen(function*() {
        const client = yield* makeScriptedClient({ "m/x": [{ hang: true }] })
        const gate = yield* makeCallGate(1)
        // Another call holds the only permit for 10 s.
        yield* Effect.fork(gate.withPermit(Effect.sleep("10 seconds")))
        yield* TestClock.adjust(0)
        const fiber = yield* callModel(request, { retries: 0, retryBaseDelayMs: 1000, timeoutMs: 5_000 }).pipe(
          Effect.provide(client.layer),
          Effect.provideService(CallGate, gate),
          Effect.fork
        )
        yield* TestClock.adjust(10_000)
        // The permit comes back one turn of the event loop after the other call ended.
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
        yield* TestClock.adjust(0)
        expect((yield* Ref.get(client.requests)).length).toBe(1)
        yield* TestClock.adjust(4_999)
        expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
        yield* TestClock.adjust(1)
        const call = yield* finished(fiber)
        expect(Either.isLeft(call.result) && call.result.left._tag).toBe("Timeout")
        expect(call.latencyMs).toBe(5_000)
      })
  )

  itClock.effect("times out a call that never answers", () =>
    Effect.gen(function*() {
      const { fiber } = yield* start([{ hang: true }], { retries: 3, retryBaseDelayMs: 1000, timeoutMs: 240_000 })
      yield* TestClock.adjust(240_000)
      const call = yield* finished(fiber)
      const error = Either.isLeft(call.result) ? call.result.left : undefined
      expect(error?._tag).toBe("Timeout")
      expect(error?.message).toContain("240.0 s")
      expect(call.attempts).toBe(1)
    }))

  itClock.effect(
    "calls in flight share one timer: one sleep on the clock for all their budgets, each cut at its own deadline",
    () =>
      Effect.gen(function*() {
        const client = yield* makeScriptedClient({}, { hang: true })
        const call = (model: string, timeoutMs: number) =>
          callModel({ ...request, model }, { retries: 0, retryBaseDelayMs: 1000, timeoutMs }).pipe(
            Effect.provide(client.layer),
            Effect.fork
          )
        const slow = yield* call("m/slow", 8_000)
        const same = yield* call("m/same", 8_000)
        yield* TestClock.adjust(0)
        expect(yield* Ref.get(client.inFlight)).toBe(2)
        // A race per call would leave a sleep per call.
        expect(yield* TestClock.sleeps()).toHaveLength(1)
        yield* TestClock.adjust(1_000)
        // A call with a sooner deadline, started later: the timer wakes for it.
        const quick = yield* call("m/quick", 2_000)
        yield* TestClock.adjust(0)
        expect(yield* Ref.get(client.inFlight)).toBe(3)
        yield* TestClock.adjust(1_999)
        expect(Option.isNone(yield* Fiber.poll(quick))).toBe(true)
        yield* TestClock.adjust(1)
        const cut = yield* finished(quick)
        expect(Either.isLeft(cut.result) && cut.result.left._tag).toBe("Timeout")
        expect(cut.latencyMs).toBe(2_000)
        expect(Option.isNone(yield* Fiber.poll(slow))).toBe(true)
        yield* TestClock.adjust(5_000)
        for (const fiber of [slow, same]) {
          const late = yield* finished(fiber)
          expect(Either.isLeft(late.result) && late.result.left._tag).toBe("Timeout")
          expect(late.latencyMs).toBe(8_000)
        }
        // Every call ended: the aborted requests are gone, and nothing is left sleeping on the clock.
        expect(yield* Ref.get(client.inFlight)).toBe(0)
        expect(yield* TestClock.sleeps()).toHaveLength(0)
      })
  )

  itClock.effect("is interruptible while a request is in flight", () =>
    Effect.gen(function*() {
      const { client, fiber } = yield* start([{ hang: true }], { retries: 3, retryBaseDelayMs: 1000, timeoutMs: 240_000 })
      expect(yield* Ref.get(client.inFlight)).toBe(1)
      const exit = yield* Fiber.interrupt(fiber)
      // Interrupted, and nothing else: not a defect, not a failure, not an answer.
      expect(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)).toBe(true)
      expect(yield* Ref.get(client.inFlight)).toBe(0)
    }))
})
