import { Effect, Schema } from "effect"
import { RunRefused } from "../domain/errors.js"
import { Manifest } from "../domain/manifest.js"
import { RunStore } from "../services/RunStore.js"
import type { CandidateOutcome } from "./fanOut.js"
import { type RunEvent, runPipeline } from "./runPipeline.js"

const decodeManifest = Schema.decodeUnknown(Schema.parseJson(Manifest))

/**
 * Synthesizes an earlier run's answers again (with another synthesizer, say) without asking the
 * candidates again: a new run, whose manifest names its source, with the answers copied into it.
 */
export const resynthesize = Effect.fn("resynthesize")(function*(input: {
  readonly runId: string
  readonly synthesizer?: string | undefined
  readonly onEvent?: ((event: RunEvent) => Effect.Effect<void>) | undefined
}) {
  const store = yield* RunStore
  const refused = (message: string) => new RunRefused({ message })
  const source = yield* store.readRunFile(input.runId, "run.json").pipe(
    Effect.flatMap((text) => decodeManifest(text).pipe(Effect.mapError((e) => refused(`run ${input.runId}: run.json is not a manifest: ${e.message}`)))),
    Effect.catchTags({
      InvalidRunPath: (e) => Effect.fail(refused(e.message)),
      RunFileNotFound: (e) => Effect.fail(refused(`${e.message} (a run still going, or not a run)`))
    })
  )
  const prompt = yield* store.readRunFile(input.runId, "prompt.md").pipe(
    Effect.catchTags({ InvalidRunPath: (e) => Effect.fail(refused(e.message)), RunFileNotFound: (e) => Effect.fail(refused(e.message)) })
  )
  const outcomes = yield* Effect.forEach(source.candidates, (record, index) =>
    record.status === "ok" && record.file !== undefined
      ? store.readRunFile(input.runId, record.file).pipe(
        Effect.map((content): CandidateOutcome => ({ index, model: record.model, record, content })),
        Effect.catchTags({ InvalidRunPath: (e) => Effect.fail(refused(e.message)), RunFileNotFound: (e) => Effect.fail(refused(e.message)) })
      )
      : Effect.succeed<CandidateOutcome>({ index, model: record.model, record, content: undefined }))
  if (!outcomes.some((o) => o.content !== undefined)) {
    return yield* refused(`run ${input.runId} has no candidate answer to synthesize`)
  }
  return yield* runPipeline({
    prompt,
    models: source.settings.models,
    synthesizer: input.synthesizer ?? source.settings.synthesizer,
    reuse: { sourceRunId: source.id, outcomes },
    onEvent: input.onEvent
  })
})
