import { describe, expect } from "@effect/vitest"
import { Effect, Ref } from "effect"
import type { FinishedRunStatus } from "../../src/domain/manifest.js"
import { type BatchProgress, makeProgressRecorder, progressAtStart, remainingOf } from "../../src/programs/progressRecorder.js"
import { itLive } from "../support/itLive.js"

// The recorder batch and eval count their progress with: a result line is written, then counted, then reported;
// what a kind of progress counts beyond the statuses and the cost is its own (`tally`).

interface Line {
  readonly status: FinishedRunStatus
  readonly cost: number | null
  readonly runDir: string | null
  readonly flagged?: boolean
}

const recorderWith = Effect.fnUntraced(function*(seen: Array<string>) {
  const lines = yield* Ref.make<ReadonlyArray<Line>>([])
  const recorder = yield* makeProgressRecorder({
    start: progressAtStart({ total: 4, skipped: 1 }),
    appendLine: (line: Line) => Ref.update(lines, (all) => [...all, line]),
    // A tally of its own: flagged lines count as invalid.
    tally: (p: BatchProgress, line: Line) => (line.flagged === true ? { ...p, invalid: p.invalid + 1 } : p),
    onProgress: (p, last) => Effect.sync(() => seen.push(`${last?.status ?? "start"} ${p.inFlight} ${remainingOf(p)}`))
  })
  return { recorder, lines }
})

describe("the progress recorder", () => {
  itLive.effect(
    "counts statuses, the cost and the runs whose cost is unknown; a run that ends leaves the runs in flight",
    () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        const { recorder, lines } = yield* recorderWith(seen)
        yield* recorder.report(undefined)
        yield* recorder.started
        yield* recorder.started
        yield* recorder.ended({ status: "ok", cost: 0.1, runDir: "/r/1" })
        yield* recorder.ended({ status: "failed", cost: null, runDir: "/r/2" })
        // A bad line: no run, so no cost to know; recorded once, and counted again without a second line.
        yield* recorder.record({ status: "failed", cost: null, runDir: null, flagged: true })
        yield* recorder.count({ status: "failed", cost: null, runDir: null, flagged: true })
        const p = yield* Ref.get(recorder.progress)
        expect(p).toMatchObject({ total: 4, skipped: 1, ok: 1, failed: 3, inFlight: 0, cost: 0.1, unknownCost: 1, invalid: 2 })
        expect((yield* Ref.get(lines)).length).toBe(3)
        // Each report sees the line it reports counted, and the run that ended no longer in flight.
        expect(seen).toEqual(["start 0 4", "ok 1 3", "failed 0 2", "failed 0 1"])
      })
  )

  itLive.effect("counts nothing for a line that could not be written", () =>
    Effect.gen(function*() {
      const recorder = yield* makeProgressRecorder({
        start: progressAtStart({ total: 1, skipped: 0 }),
        appendLine: () => Effect.die("disk full"),
        tally: (p: BatchProgress) => p
      })
      yield* recorder.started
      yield* Effect.exit(recorder.ended({ status: "ok", cost: 0.1, runDir: "/r/1" }))
      expect(yield* Ref.get(recorder.progress)).toMatchObject({ ok: 0, inFlight: 1, cost: 0 })
    }))
})
