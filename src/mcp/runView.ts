import { Deferred, Effect, Option, Schema } from "effect"
import type { StoreError } from "../domain/errors.js"
import type { CandidateRecord } from "../domain/manifest.js"
import { responseFileName } from "../domain/model.js"
import { runIdTime } from "../domain/runState.js"
import { readRunWithManifest } from "../programs/recoverRun.js"
import type { RunResult } from "../programs/run/request.js"
import type { RunView } from "../services/runReader.js"
import { RunStore } from "../services/runStore.js"
import type { LiveRun, LiveRuns, LiveSnapshot } from "./liveRuns.js"

// Where a run stands, whoever ran it: this server (live, in memory), or any process before (from its
// files). get_run, cancel_run and the MCP task store all read runs through here.

export interface FinishedView {
  readonly _tag: "Finished"
  readonly result: RunResult
}

export interface RunningView {
  readonly _tag: "Running"
  readonly runId: string
  readonly runDir: string
  readonly createdAt: Date
  readonly models: ReadonlyArray<string>
  /** One entry per model: its record once it finished. */
  readonly candidates: ReadonlyArray<CandidateRecord | undefined>
  /** Tokens streamed so far per candidate, and the synthesis last; known only for a run of this server. */
  readonly streamed: ReadonlyArray<number> | undefined
  readonly synthesizer: string | undefined
  /** What the strategy step is doing, for a live run of this server. */
  readonly stage?: string | undefined
  /** Who runs it when it is not this server ("pid 4242 on host h"). */
  readonly elsewhere: string | undefined
  /** The run itself, when this server runs it. */
  readonly live: LiveRun | undefined
}

export type McpRunView = FinishedView | RunningView

/** A run id that names no run (or is not a run id at all): the message names it. */
export class UnknownRun extends Schema.TaggedError<UnknownRun>()("UnknownRun", {
  runId: Schema.String,
  message: Schema.String
}) {}

/** A live run of this server as a snapshot shows it. */
export const runningViewOf = (live: LiveRun, s: LiveSnapshot): RunningView => ({
  _tag: "Running",
  runId: s.runId,
  runDir: s.runDir,
  createdAt: s.createdAt,
  models: s.models,
  candidates: s.candidates,
  streamed: live.streamed(),
  synthesizer: s.synthesizer,
  stage: s.stage,
  elsewhere: undefined,
  live
})

/** A live run of this server as it stands now. */
export const liveView = (live: LiveRun) => Effect.map(live.snapshot, (s) => runningViewOf(live, s))

/**
 * The run as it stands now. A run of this server is read from memory (a live one never touches the
 * disk); any other from its directory under the runs root (nothing outside it is ever read): finished, an
 * interrupted one (its manifest rebuilt from the owner record and the answers on disk), or another
 * process's live run.
 */
export const readRunView = (runs: LiveRuns, runId: string): Effect.Effect<McpRunView, UnknownRun | StoreError, RunStore> =>
  Effect.gen(function*() {
    const live = yield* runs.get(runId)
    if (live !== undefined) {
      const done = yield* Deferred.poll(live.done)
      if (Option.isNone(done)) return yield* liveView(live)
      const result = yield* Effect.either(done.value)
      // A run that ended without a result (cancelled, a store failure) is told by the manifest it left.
      if (result._tag === "Right") return { _tag: "Finished", result: result.right } satisfies FinishedView
    }
    return yield* fromDisk(runId)
  })

const fromDisk = (runId: string): Effect.Effect<McpRunView, UnknownRun | StoreError, RunStore> =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const { view, manifest } = yield* readRunWithManifest(runId)
    if (view.state === "running" || manifest === undefined) return elsewhere(view)
    const final = view.state === "finished"
      ? yield* store.readRunFile(runId, "final.md").pipe(Effect.option, Effect.map(Option.getOrUndefined))
      : undefined
    return { _tag: "Finished", result: { manifest, final, runDir: view.dir } } satisfies FinishedView
  }).pipe(
    Effect.catchTags({
      InvalidRunPath: () => new UnknownRun({ runId, message: `${JSON.stringify(runId)} is not a run id (see list_runs)` }),
      RunFileNotFound: () => new UnknownRun({ runId, message: `no run ${JSON.stringify(runId)} (see list_runs)` })
    })
  )

/** Another process's live run, as far as its files tell: its models (from the owner record) and the answers saved. */
const elsewhere = (view: RunView): RunningView => {
  const models = view.owner?.settings?.models ?? []
  const saved = new Set(view.answers)
  return {
    _tag: "Running",
    runId: view.id,
    runDir: view.dir,
    createdAt: new Date(view.owner?.createdAt ?? runIdTime(view.id) ?? 0),
    models,
    candidates: models.map((model, index) => {
      const file = responseFileName(index, model)
      return saved.has(file) ? { model, status: "ok", attempts: 1, file } : undefined
    }),
    streamed: undefined,
    synthesizer: undefined,
    elsewhere: view.owner !== undefined ? `process ${view.owner.pid} on ${view.owner.host}` : "another process",
    live: undefined
  }
}
