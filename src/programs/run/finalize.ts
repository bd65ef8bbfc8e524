import { Clock, Effect, Ref } from "effect"
import { StoreError } from "../../domain/errors.js"
import { answeredOf, formatSeconds } from "../../domain/format.js"
import { sha256Hex } from "../../domain/hash.js"
import type { CandidateRecord, Manifest, SynthesisRecord } from "../../domain/manifest.js"
import { RunStore } from "../../services/runStore.js"
import { strategyCalls } from "../strategies/registry.js"
import { failureReason, statusOf, sumUsage } from "./outcome.js"
import type { StartedRun } from "./started.js"
import { listedUnwritten } from "./writes.js"

/** How the run ended: an interruption, or a failure of its own (`stopped`, its reason); neither when it ran its course. */
export interface Ending {
  readonly interrupted: boolean
  readonly stopped?: string | undefined
}

const manifestOf = Effect.fnUntraced(function*(started: StartedRun, ending: Ending) {
  const { plan, request, run, startedMs, writes } = started
  const { interrupted, stopped } = ending
  const s = yield* Ref.get(started.state)
  const finishedMs = yield* Clock.currentTimeMillis
  const cut = interrupted || stopped !== undefined
  const candidates = s.candidates.map((record, i): CandidateRecord =>
    // A call still going when the run ended was cut short: by an interruption, or by the run's own failure.
    record ?? {
      model: plan.models[i]!,
      status: cut ? "cancelled" : "error",
      attempts: s.attempts[i] ?? 0,
      ...(interrupted ? { reason: "interrupted" } : stopped !== undefined ? { reason: "the run stopped" } : {})
    }
  )
  const synthesis: SynthesisRecord | undefined = s.synthesis ??
    (s.synthesizing !== undefined ? { model: s.synthesizing, status: cut ? "cancelled" : "error", attempts: 0 } : undefined)
  const unwritten = yield* writes.unwritten
  const stepCalls = strategyCalls(s.strategy)
  // A file that could not be written is lost from the run: the run is no better than partial.
  const status = ((st) => (st === "ok" && unwritten.length > 0 ? "partial" : st))(statusOf(s, interrupted, stepCalls))
  const error = stopped ?? failureReason(s, status)
  return {
    id: run.id,
    status,
    createdAt: run.createdAt.toISOString(),
    finishedAt: new Date(run.createdAt.getTime() + (finishedMs - startedMs)).toISOString(),
    durationMs: finishedMs - startedMs,
    prompt: { chars: request.prompt.length, sha256: sha256Hex(request.prompt) },
    settings: plan.settings,
    candidates: candidates.map((c) => writes.withoutUnwritten(c, unwritten)),
    ...(synthesis ? { synthesis: writes.withoutUnwritten(synthesis, unwritten) } : {}),
    // A re-synthesis paid only for its synthesis: the candidates' usage stays with the source run.
    usage: sumUsage([...(request.reuse ? [] : candidates), ...stepCalls, synthesis]),
    ...(request.reuse?.sourceRunId !== undefined ? { source: request.reuse.sourceRunId } : {}),
    ...(request.thread !== undefined ? { parent: request.thread.parent } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(unwritten.length > 0 ? { unwritten: listedUnwritten(unwritten) } : {}),
    ...(started.attachments.records.length > 0 ? { attachments: started.attachments.records } : {}),
    ...(s.report !== undefined ? { report: s.report } : {}),
    ...(s.strategy !== undefined ? { strategy: writes.strategyWithoutUnwritten(s.strategy, unwritten) } : {})
  } satisfies Manifest
})

/**
 * Step 4, however the run ended: the manifest (with `final.md`) once every other write has ended. A run whose
 * files cannot be written still ends with its answer; its owner record then tells readers it was cut.
 */
export const finalizeRun = (started: StartedRun, ending: Ending) =>
  Effect.gen(function*() {
    const { emit, run, writes } = started
    const store = yield* RunStore
    yield* writes.allSettled
    yield* writes.retryUnwritten
    const { final } = yield* Ref.get(started.state)
    const withFinal = yield* manifestOf(started, ending)
    const written = final === undefined ? false : yield* store.writeFinal(run, final, withFinal).pipe(
      Effect.as(true),
      // Neither file landed: the manifest is written alone, saying final.md is not there.
      Effect.catchAll((e) => writes.note(new StoreError({ path: `${run.dir}/final.md`, message: e.message })).pipe(Effect.as(false)))
    )
    const manifest: Manifest = written ? withFinal : yield* manifestOf(started, ending)
    if (!written) {
      yield* store.writeManifest(run, manifest).pipe(
        Effect.catchAll((e) => Effect.logError(`${e.message}: the run has no manifest on disk`))
      )
    }
    yield* Effect.logInfo(`run ${manifest.status}: ${answeredOf(manifest)} answered in ${formatSeconds(manifest.durationMs)}, ${run.dir}`)
    yield* emit({ _tag: "RunFinished", manifest, runDir: run.dir })
    return manifest
  })
