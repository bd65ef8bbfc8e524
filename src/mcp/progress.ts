import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Ref } from "effect"
import type { ErrorInfo } from "../domain/manifest.js"
import { formatSeconds } from "../programs/callModel.js"
import type { RunEvent } from "../programs/runPipeline.js"

/** How a tool call sends a notification to its client (the SDK's `extra.sendNotification`). */
export type SendNotification = (notification: ServerNotification) => Promise<void>

interface ProgressState {
  readonly progress: number
  readonly total: number
  readonly finished: number
  readonly answered: number
  readonly synthesizers: number
}

/**
 * Why a call failed, in a few words. The provider errors already lead with what matters
 * ("HTTP 429: Rate limit exceeded", "Timed out after 240.0 s (retries included)", "Network error: …").
 */
export const failureOf = (record: { readonly status: string; readonly error?: ErrorInfo | undefined }): string =>
  record.status === "cancelled" ? "cancelled" : record.error?.message ?? record.status

/**
 * A run's events as MCP progress notifications, for a call that carried a progress token. Scale: `total` is
 * the number of candidates + 2; each finished candidate (answered or failed) adds 1, the synthesis starting
 * adds 1 (a fallback synthesizer adds a fraction of what is left), the run finishing reaches `total`. Events
 * come from concurrent fibers, so they are numbered and sent one at a time: `progress` strictly increases.
 * A failed send (client gone) never disturbs the run.
 */
export const makeProgressReporter = Effect.fn("mcp.makeProgressReporter")(function*(
  token: ProgressToken | undefined,
  send: SendNotification
) {
  if (token === undefined) return (_event: RunEvent) => Effect.void
  const state = yield* Ref.make<ProgressState>({ progress: 0, total: 2, finished: 0, answered: 0, synthesizers: 0 })
  const lock = yield* Effect.makeSemaphore(1)

  const notify = (s: ProgressState, message: string) =>
    Effect.tryPromise(() =>
      send({ method: "notifications/progress", params: { progressToken: token, progress: s.progress, total: s.total, message } })
    ).pipe(Effect.catchAll((e) => Effect.logDebug(`progress notification not sent: ${e.message}`)))

  const next = (update: (s: ProgressState) => ProgressState, message: (s: ProgressState) => string) =>
    Ref.updateAndGet(state, update).pipe(Effect.flatMap((s) => notify(s, message(s))))

  const step = (event: RunEvent): Effect.Effect<void> => {
    switch (event._tag) {
      case "RunStarted":
        return next(
          (s) => ({ ...s, progress: 0, total: event.models.length + 2 }),
          () => `run ${event.run.id}: asking ${event.models.length} model${event.models.length === 1 ? "" : "s"} (${event.models.join(", ")})`
        )
      case "CandidateFinished": {
        const { record } = event.outcome
        const ok = record.status === "ok"
        return next(
          (s) => ({ ...s, progress: s.finished + 1, finished: s.finished + 1, answered: s.answered + (ok ? 1 : 0) }),
          (s) =>
            ok
              ? `${s.answered}/${event.total} answered: ${record.model} in ${formatSeconds(record.latencyMs ?? 0)}`
              : `${record.model} failed after ${formatSeconds(record.latencyMs ?? 0)} (${failureOf(record)}); ` +
                `${s.answered}/${event.total} answered, ${s.finished}/${event.total} done`
        )
      }
      case "SynthesisStarted":
        // The first synthesizer gets a whole step; each fallback half of what remains before the end.
        return next(
          (s) => ({
            ...s,
            progress: s.synthesizers === 0 ? s.total - 1 : s.progress + (s.total - s.progress) / 2,
            synthesizers: s.synthesizers + 1
          }),
          (s) =>
            s.synthesizers === 1
              ? `synthesizing ${event.candidates} answer${event.candidates === 1 ? "" : "s"} with ${event.model}`
              : `the synthesizer failed; trying the fallback ${event.model}`
        )
      case "CandidateDelta":
      case "CandidateRetry":
      case "SynthesisDelta":
        return Effect.void
      case "RunFinished": {
        const { manifest } = event
        const answered = manifest.candidates.filter((c) => c.status === "ok").length
        return next(
          (s) => ({ ...s, progress: s.total }),
          () =>
            `run ${manifest.status} in ${formatSeconds(manifest.durationMs)}: ${answered}/${manifest.candidates.length} answered` +
            (manifest.error !== undefined ? ` (${manifest.error})` : "")
        )
      }
    }
  }

  return (event: RunEvent) => lock.withPermits(1)(step(event))
})
