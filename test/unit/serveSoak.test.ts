import { Effect, Tracer } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { serveInProcess } from "../support/serveInProcess.js"
import { makeTempDirs } from "../support/tempDirs.js"

// Issue 23, finding 6: a long-lived `serve` must not keep anything per answered call. The leak found then:
// Effect's tracer logger records every log line as an event of the current span, and `serveMcp`'s span
// lives as long as the server, so its heap grew 3-4 KB an answered call. The heap figure over 2,000 calls
// is `npm run bench`'s (`BENCH_ONLY=soak`); this holds the cause in a few calls.

const tempDir = makeTempDirs("pllm-soak-")

/** Effect's own tracer, counting the events each span records, by span name. */
const countingTracer = (native: Tracer.Tracer) => {
  const eventsBySpan = new Map<string, number>()
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = native.span(name, parent, context, links, startTime, kind, options)
      const event = span.event.bind(span)
      span.event = (eventName, time, attributes) => {
        eventsBySpan.set(name, (eventsBySpan.get(name) ?? 0) + 1)
        event(eventName, time, attributes)
      }
      return span
    },
    context: (f, fiber) => native.context(f, fiber)
  })
  return { tracer, eventsBySpan }
}

describe("serve keeps nothing per answered call", () => {
  it("records no log line as an event of a span (serveMcp's lives as long as the server)", async () => {
    const native = await Effect.runPromise(Effect.tracer)
    const { eventsBySpan, tracer } = countingTracer(native)
    // A few calls are enough: with the leak, every line logged during a call was an event of serveMcp's span.
    const calls = 5
    const { logged } = await serveInProcess(calls, { outputDir: path.join(tempDir(), "runs"), tracer })
    expect(logged).toBeGreaterThan(calls * 2)
    expect(Object.fromEntries(eventsBySpan)).toEqual({})
  })
})
