import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js"
import { Clock, Duration, Effect, Ref, Stream } from "effect"
import type { LiveRun } from "./liveRuns.js"
import { progressLine } from "./results.js"
import { type RunningView, runningViewOf } from "./runView.js"

/** How a tool call sends a notification to its client (the SDK's `extra.sendNotification`). */
export type SendNotification = (notification: ServerNotification) => Promise<void>

/**
 * The longest silence while a call waits: clients that reset their request timeout on progress (the SDK's
 * `resetTimeoutOnProgress`, Claude Code) keep a long call alive only if progress keeps coming.
 */
export const HEARTBEAT = Duration.seconds(10)

export interface Progress {
  /** Reports on `live` while the caller waits: now, at each step of the run, and at least every HEARTBEAT. */
  readonly watch: (live: LiveRun) => Effect.Effect<never>
  /** The last notification, at `total`, once the run ended while the caller waited. */
  readonly finish: (message: string) => Effect.Effect<void>
}

const none: Progress = { watch: () => Effect.never, finish: () => Effect.void }

/**
 * Progress notifications for one tool call that carried a progress token. Scale: `total` is the number
 * of candidates + 2; each finished candidate is a step, the synthesis starting another, the end the last.
 * A heartbeat between steps moves `progress` a little towards the next step, so it strictly increases
 * however long a step takes. Notifications are sent one at a time; a failed send never disturbs the run.
 */
export const makeProgress = (token: ProgressToken | undefined, send: SendNotification) =>
  Effect.gen(function*() {
    if (token === undefined) return none
    // Nothing sent yet: the first notification may be 0.
    const last = yield* Ref.make({ progress: -1, total: 0 })
    const lock = yield* Effect.makeSemaphore(1)

    const sendOne = (progress: number, total: number, message: string) =>
      Effect.tryPromise(() => send({ method: "notifications/progress", params: { progressToken: token, progress, total, message } })).pipe(
        Effect.catchAll((e) => Effect.logDebug(`progress notification not sent: ${e.message}`))
      )

    const notify = (view: RunningView) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const total = view.models.length + 2
        const steps = view.candidates.filter((c) => c !== undefined).length + (view.synthesizer !== undefined ? 1 : 0)
        const previous = (yield* Ref.get(last)).progress
        const progress = steps > previous ? steps : previous + (Math.floor(previous) + 1 - previous) / 10
        yield* Ref.set(last, { progress, total })
        yield* sendOne(progress, total, `run ${view.runId}: ${progressLine(view, now - view.createdAt.getTime())}`)
      }))

    return {
      // The snapshot now and at each change, and a heartbeat (its first tick dropped: the snapshot came first).
      watch: (live) =>
        Stream.merge(live.changes, Stream.tick(HEARTBEAT).pipe(Stream.drop(1), Stream.mapEffect(() => live.snapshot))).pipe(
          // Each step as it happened (not the state by the time it is reported): one notification per step.
          Stream.runForEach((snapshot) => notify(runningViewOf(live, snapshot))),
          Effect.zipRight(Effect.never)
        ),
      finish: (message) =>
        lock.withPermits(1)(Effect.gen(function*() {
          const { progress, total } = yield* Ref.get(last)
          if (total > progress) yield* sendOne(total, total, message)
          yield* Ref.set(last, { progress: total, total })
        }))
    } satisfies Progress
  })
