import { Clock, Effect, Exit, Option, Ref } from "effect"
import * as crypto from "node:crypto"
import { StoreError } from "../domain/errors.js"
import type { CandidateRecord, Manifest, RunSettings, SynthesisRecord } from "../domain/manifest.js"
import { responseFileName } from "../domain/model.js"
import { duplicatesIn } from "../domain/text.js"
import { type RunHandle, RunStore } from "../services/RunStore.js"
import { Settings } from "../services/Settings.js"
import { formatSeconds } from "./callModel.js"
import { checkRunRequest } from "./checkRunRequest.js"
import { failureReason, type RunState, statusOf, stoppedBy, sumUsage } from "./runOutcome.js"
import { makeRunWrites } from "./runWrites.js"
import { type CandidateOutcome, fanOut, type FanOutPolicy } from "./fanOut.js"
import { synthesize } from "./synthesize.js"

/** What a run reports while it goes, for progress displays and MCP progress notifications. */
export type RunEvent =
  | { readonly _tag: "RunStarted"; readonly run: RunHandle; readonly models: ReadonlyArray<string> }
  /** A piece of a candidate's streamed answer (index in the model list); `SynthesisDelta` likewise. */
  | { readonly _tag: "CandidateDelta"; readonly index: number; readonly text: string }
  /** A candidate's call is being retried (attempt ≥ 2). */
  | { readonly _tag: "CandidateRetry"; readonly index: number; readonly attempt: number }
  | {
    readonly _tag: "CandidateFinished"
    readonly outcome: CandidateOutcome
    /** Candidates finished so far (answered or failed), and how many answered. */
    readonly finished: number
    readonly answered: number
    readonly total: number
  }
  | { readonly _tag: "SynthesisStarted"; readonly model: string; readonly candidates: number }
  | { readonly _tag: "SynthesisDelta"; readonly text: string }
  | { readonly _tag: "RunFinished"; readonly manifest: Manifest; readonly runDir: string }

export interface RunRequest {
  readonly prompt: string
  /** Overrides the configured candidates / synthesizer for this run only. */
  readonly models?: ReadonlyArray<string> | undefined
  readonly synthesizer?: string | undefined
  /** Override the run policies for this run only (milliseconds). */
  readonly deadlineMs?: number | undefined
  readonly quorum?: number | undefined
  readonly graceMs?: number | undefined
  /**
   * Re-synthesis: the candidates' outcomes of an earlier run (in model order), copied into this run
   * instead of asking the models again.
   */
  readonly reuse?: { readonly sourceRunId: string; readonly outcomes: ReadonlyArray<CandidateOutcome> } | undefined
  readonly onEvent?: ((event: RunEvent) => Effect.Effect<void>) | undefined
}

export interface RunResult {
  readonly manifest: Manifest
  /** The final answer, when the run produced one. */
  readonly final: string | undefined
  readonly runDir: string
}

/**
 * The whole pipeline: a run directory, the fan-out, the synthesis, the manifest. Whatever happens —
 * success, failures, interruption — the manifest is written and every answer already received stays on disk.
 *
 * Files are written beside the calls rather than in their way (the synthesis does not wait for the
 * last answer's file), and every write has ended before the manifest. A write that fails never stops the
 * run: the answers already paid for go on to the synthesis, and the manifest names only files on disk.
 */
export const runPipeline = Effect.fn("runPipeline")(function*(request: RunRequest) {
  const settings = yield* Settings
  const store = yield* RunStore
  const emit = request.onEvent ?? (() => Effect.void)
  const models = request.models && request.models.length > 0 ? request.models : settings.models
  const primary = request.synthesizer ?? settings.synthesizer
  const synthesizers = [primary, ...settings.fallbackSynthesizers.filter((m) => m !== primary)]
  const startedMs = yield* Clock.currentTimeMillis
  const deadlineMs = request.deadlineMs ?? Option.getOrUndefined(settings.deadlineMs)
  const deadlineAt = deadlineMs === undefined ? undefined : startedMs + deadlineMs
  // With a deadline, the fan-out stops early enough for the synthesis to fit before it.
  const reserveMs = deadlineMs === undefined
    ? 0
    : Math.min(deadlineMs, Option.getOrElse(settings.synthesisReserveMs, () => Math.round(deadlineMs * 0.4)))
  const policy: FanOutPolicy = {
    cutoffAt: deadlineAt === undefined ? undefined : deadlineAt - reserveMs,
    quorum: request.quorum ?? Option.getOrUndefined(settings.quorum),
    graceMs: request.graceMs ?? settings.graceMs
  }

  yield* checkRunRequest({ prompt: request.prompt, models: request.reuse ? [] : models, synthesizers })
  const runSettings: RunSettings = {
    models,
    synthesizer: primary,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    retries: settings.retries,
    temperature: settings.temperature,
    ...Option.match(settings.maxTokens, { onNone: () => ({}), onSome: (maxTokens) => ({ maxTokens }) }),
    baseUrl: settings.baseUrl,
    fallbackSynthesizers: synthesizers.slice(1),
    stream: settings.stream,
    ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    ...(policy.quorum !== undefined ? { quorum: policy.quorum, graceMs: policy.graceMs } : {})
  }
  for (const model of duplicatesIn(models)) {
    yield* Effect.logWarning(`${model} is named more than once: it is asked, and paid for, once per mention`)
  }
  // The owner record carries the settings, so a run whose process dies can still be read and resynthesized.
  const run = yield* store.createRun(runSettings)

  const writes = yield* makeRunWrites(run, yield* Effect.scope)
  const { save } = writes
  yield* save(store.writePrompt(run, request.prompt))

  const state = yield* Ref.make<RunState>({
    candidates: models.map(() => undefined),
    attempts: models.map(() => 0),
    synthesis: undefined,
    synthesizing: undefined,
    final: undefined
  })

  const manifestOf = Effect.fn("manifestOf")(function*(interrupted: boolean, extraError?: string) {
    const s = yield* Ref.get(state)
    const finishedMs = yield* Clock.currentTimeMillis
    const candidates = s.candidates.map((record, i): CandidateRecord =>
      // A call still going when the run ended was cut short: by an interruption, or by the run's own failure.
      record ?? {
        model: models[i]!,
        status: interrupted || extraError !== undefined ? "cancelled" : "error",
        attempts: s.attempts[i] ?? 0,
        ...(interrupted ? { reason: "interrupted" } : extraError !== undefined ? { reason: "the run stopped" } : {})
      }
    )
    const synthesis: SynthesisRecord | undefined = s.synthesis ??
      (s.synthesizing !== undefined
        ? { model: s.synthesizing, status: interrupted || extraError !== undefined ? "cancelled" : "error", attempts: 0 }
        : undefined)
    const unwritten = yield* writes.unwritten
    // A file that could not be written is lost from the run: the run is no better than partial.
    const status = ((st) => (st === "ok" && unwritten.length > 0 ? "partial" : st))(statusOf(s, interrupted))
    const error = extraError ?? failureReason(s, status)
    const manifest: Manifest = {
      id: run.id,
      status,
      createdAt: run.createdAt.toISOString(),
      finishedAt: new Date(run.createdAt.getTime() + (finishedMs - startedMs)).toISOString(),
      durationMs: finishedMs - startedMs,
      prompt: { chars: request.prompt.length, sha256: crypto.createHash("sha256").update(request.prompt).digest("hex") },
      settings: runSettings,
      candidates: candidates.map((c) => writes.withoutUnwritten(c, unwritten)),
      ...(synthesis ? { synthesis: writes.withoutUnwritten(synthesis, unwritten) } : {}),
      // A re-synthesis paid only for its synthesis: the candidates' usage stays with the source run.
      usage: sumUsage(request.reuse ? [synthesis] : [...candidates, synthesis]),
      ...(request.reuse ? { source: request.reuse.sourceRunId } : {}),
      ...(error !== undefined ? { error } : {}),
      ...(unwritten.length > 0 ? { unwritten } : {})
    }
    return manifest
  })

  /**
   * Writes the manifest (with `final.md`, when there is a final answer) once every other write has ended.
   * When `final.md` cannot be written the manifest is written without it; when the manifest cannot be
   * written either, the run still ends with its answer (the owner record then tells readers it was cut).
   */
  const finish = (interrupted: boolean, extraError?: string) =>
    Effect.gen(function*() {
      yield* writes.allSettled
      const { final } = yield* Ref.get(state)
      const withFinal = yield* manifestOf(interrupted, extraError)
      const written = final === undefined ? false : yield* store.writeFinal(run, final, withFinal).pipe(
        Effect.as(true),
        // Neither file landed: the manifest is written alone, saying final.md is not there.
        Effect.catchAll((e) => writes.note(new StoreError({ path: `${run.dir}/final.md`, message: e.message })).pipe(Effect.as(false)))
      )
      const manifest = written ? withFinal : yield* manifestOf(interrupted, extraError)
      if (!written) {
        yield* store.writeManifest(run, manifest).pipe(
          Effect.catchAll((e) => Effect.logError(`${e.message}: the run has no manifest on disk`))
        )
      }
      yield* Effect.logInfo(
        `run ${manifest.status}: ${manifest.candidates.filter((c) => c.status === "ok").length}/${manifest.candidates.length} answered ` +
          `in ${formatSeconds(manifest.durationMs)}, ${run.dir}`
      )
      yield* emit({ _tag: "RunFinished", manifest, runDir: run.dir })
      return manifest
    })

  const body = Effect.gen(function*() {
    yield* Effect.logInfo(
      request.reuse
        ? `run ${run.id}: synthesizing again the answers of run ${request.reuse.sourceRunId}, files in ${run.dir}`
        : `run ${run.id}: asking ${models.length} model${models.length === 1 ? "" : "s"} (at most ${settings.concurrency} at a time), files in ${run.dir}`
    )
    yield* emit({ _tag: "RunStarted", run, models })

    const recordOutcome = (outcome: CandidateOutcome) =>
      Ref.updateAndGet(state, (s) => ({
        ...s,
        candidates: s.candidates.map((c, i) => (i === outcome.index ? outcome.record : c))
      }))
    const onFinished = (outcome: CandidateOutcome) =>
      recordOutcome(outcome).pipe(
        Effect.flatMap((s) =>
          emit({
            _tag: "CandidateFinished",
            outcome,
            finished: s.candidates.filter((c) => c !== undefined).length,
            answered: s.candidates.filter((c) => c?.status === "ok").length,
            total: models.length
          })
        )
      )

    const outcomes = request.reuse
      ? yield* Effect.forEach(request.reuse.outcomes, (outcome) =>
        Effect.gen(function*() {
          if (outcome.content !== undefined) yield* save(store.writeResponse(run, outcome.index, outcome.model, outcome.content))
          const copied: CandidateOutcome = {
            ...outcome,
            record: { ...outcome.record, ...(outcome.content !== undefined ? { file: responseFileName(outcome.index, outcome.model) } : {}) }
          }
          yield* onFinished(copied)
          return copied
        }))
      : yield* fanOut({
        run,
        prompt: request.prompt,
        models,
        policy,
        onAttempt: (index, attempt) =>
          Ref.update(state, (s) => ({ ...s, attempts: s.attempts.map((n, i) => (i === index ? attempt : n)) })).pipe(
            Effect.zipRight(attempt > 1 ? emit({ _tag: "CandidateRetry", index, attempt }) : Effect.void)
          ),
        onDelta: (index, text) => emit({ _tag: "CandidateDelta", index, text }),
        onFinished,
        onInterrupted: (outcome) => Effect.asVoid(recordOutcome(outcome)),
        save
      })

    const answered = outcomes.filter((o) => o.content !== undefined)
    if (answered.length === 0) {
      yield* Effect.logError(`no candidate answered: nothing to synthesize`)
      return yield* Effect.uninterruptible(finish(false))
    }

    const synthesis = yield* synthesize({
      prompt: request.prompt,
      candidates: answered.map((o) => ({ model: o.model, content: o.content! })),
      synthesizers,
      deadlineAt,
      onDelta: (text) => emit({ _tag: "SynthesisDelta", text }),
      onStart: (model) =>
        Ref.update(state, (s) => ({ ...s, synthesizing: model })).pipe(
          Effect.zipRight(emit({ _tag: "SynthesisStarted", model, candidates: answered.length }))
        )
    })

    // A run never ends without an answer while a candidate succeeded: fall back to the first one, said plainly.
    const fallback = answered[0]!
    const final = synthesis.content ??
      `> **Note:** the synthesis failed (${synthesis.record.error?.message ?? "no synthesizer answered"}), ` +
        `so this is the answer of \`${fallback.model}\` alone.\n\n${fallback.content}`
    const file = "final.md"
    const record: SynthesisRecord = synthesis.content !== undefined
      ? { ...synthesis.record, file }
      : { ...synthesis.record, file, fallbackToCandidate: fallback.model }
    yield* Ref.update(state, (s) => ({ ...s, synthesis: record, final }))
    return yield* Effect.uninterruptible(finish(false))
  })

  const manifest = yield* body.pipe(
    Effect.onExit((exit) =>
      Exit.isSuccess(exit)
        ? Effect.void
        : finish(Exit.isInterrupted(exit), Exit.isInterrupted(exit) ? undefined : stoppedBy(exit.cause)).pipe(Effect.asVoid)
    ),
    Effect.annotateLogs("run", run.id)
  )
  const { final } = yield* Ref.get(state)
  return { manifest, final, runDir: run.dir } satisfies RunResult
}, Effect.scoped)
