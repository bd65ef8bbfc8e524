import { Effect } from "effect"
import { RunRefused, type StoreError } from "../domain/errors.js"
import type { InvalidRunPath, RunFileNotFound } from "../services/runReader.js"
import { RunStore } from "../services/runStore.js"
import { Settings } from "../services/settings.js"
import { loadRunAttachments } from "./attachments/plan.js"
import { readRunWithManifest } from "./recoverRun.js"
import type { CandidateOutcome } from "./run/fanOut.js"
import type { RunEvent } from "./run/request.js"
import { runPipeline } from "./runPipeline.js"
import { threadFor } from "./thread/readThread.js"

/**
 * Synthesizes an earlier run's answers again (with another synthesizer, say) without asking the
 * candidates again: a new run, whose manifest names its source, with the answers copied into it.
 */
export const resynthesize = Effect.fn("resynthesize")(function*(input: {
  readonly runId: string
  readonly synthesizer?: string | undefined
  readonly onEvent?: ((event: RunEvent) => Effect.Effect<void>) | undefined
  /** See RunRequest's `deltas`. */
  readonly deltas?: boolean | undefined
}) {
  const store = yield* RunStore
  const refused = (message: string) => new RunRefused({ message })
  // A run that is not there (or not a run) is the caller's mistake: refused, nothing spent.
  const orRefused = <A, R>(effect: Effect.Effect<A, InvalidRunPath | RunFileNotFound | StoreError, R>) =>
    effect.pipe(Effect.catchTags({
      InvalidRunPath: (e) => Effect.fail(refused(e.message)),
      RunFileNotFound: (e) => Effect.fail(refused(e.message))
    }))
  // A run whose process died is synthesized from the answers it left on disk.
  const { view, manifest } = yield* orRefused(readRunWithManifest(input.runId))
  if (manifest === undefined) {
    return yield* refused(view.state === "running" ? `run ${input.runId} is still going` : `run ${input.runId} has no readable run.json`)
  }
  const source = manifest
  const prompt = yield* orRefused(store.readRunFile(input.runId, "prompt.md"))
  const outcomes = yield* Effect.forEach(source.candidates, (record, index) =>
    record.status === "ok" && record.file !== undefined
      ? orRefused(store.readRunFile(input.runId, record.file)).pipe(
        Effect.map((content): CandidateOutcome => ({ index, model: record.model, record, content }))
      )
      : Effect.succeed<CandidateOutcome>({ index, model: record.model, record, content: undefined }))
  if (!outcomes.some((o) => o.content !== undefined)) {
    return yield* refused(`run ${input.runId} has no candidate answer to synthesize`)
  }
  // The question as it was asked: the synthesizer sees the same attachments, which the new run keeps too.
  const attachments = yield* orRefused(loadRunAttachments(input.runId, source))
  // A follow-up stays one: the synthesizer sees its earlier turns again, and the new run keeps its parent.
  const thread = source.parent === undefined ? undefined : yield* threadFor(source.parent).pipe(
    Effect.catchTag("RunRefused", (e) => Effect.as(Effect.logWarning(`${e.message}: synthesizing without the earlier turns`), undefined))
  )
  // The source run's panel, and its synthesizer unless another is named: they are this run's settings.
  const settings = yield* Settings
  return yield* runPipeline({
    thread,
    prompt,
    attachments,
    reuse: { sourceRunId: source.id, outcomes },
    onEvent: input.onEvent,
    deltas: input.deltas
  }).pipe(
    Effect.provideService(Settings, {
      ...settings,
      models: source.settings.models,
      synthesizer: input.synthesizer ?? source.settings.synthesizer
    })
  )
})

/**
 * Synthesizes answers the caller already has (an eval's frozen candidates) without asking any candidate:
 * a new run with those answers as its responses, in which only the synthesis is paid for. The strategy and
 * the synthesizer are the settings'.
 */
export const synthesizeGiven = Effect.fn("synthesizeGiven")(function*(input: {
  readonly prompt: string
  readonly answers: ReadonlyArray<{ readonly model: string; readonly content: string }>
  /** With `rank` or `refine`: the models that rank or refine the given answers (the answers' own are not callable). */
  readonly panel?: ReadonlyArray<string> | undefined
  readonly onEvent?: ((event: RunEvent) => Effect.Effect<void>) | undefined
}) {
  const outcomes = input.answers.map((answer, index): CandidateOutcome => ({
    index,
    model: answer.model,
    record: { model: answer.model, status: "ok", attempts: 0 },
    content: answer.content
  }))
  // The answers' models are the run's candidates (as its manifest records them).
  const settings = yield* Settings
  return yield* runPipeline({ prompt: input.prompt, reuse: { outcomes }, panel: input.panel, onEvent: input.onEvent }).pipe(
    Effect.provideService(Settings, { ...settings, models: input.answers.map((a) => a.model) })
  )
})
