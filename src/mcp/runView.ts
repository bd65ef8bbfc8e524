import { Clock, Deferred, Effect, Option, Schema } from "effect"
import * as path from "node:path"
import type { StoreError } from "../domain/errors.js"
import type { CandidateRecord } from "../domain/manifest.js"
import type { RunResult } from "../programs/runPipeline.js"
import { RunStore } from "../services/RunStore.js"
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
  /** Who runs it when it is not this server ("pid 4242 on host h"). */
  readonly elsewhere: string | undefined
  /** The run itself, when this server runs it. */
  readonly live: LiveRun | undefined
}

export interface InterruptedView {
  readonly _tag: "Interrupted"
  readonly runId: string
  readonly runDir: string
  readonly models: ReadonlyArray<string>
  /** The answers on disk, by model. */
  readonly answers: ReadonlyArray<{ readonly model: string; readonly file: string }>
  /** The process that owned it, as a reader can tell ("pid 4242 on host h"). */
  readonly owner: string
}

export type RunView = FinishedView | RunningView | InterruptedView

/** A run id that names no run (or is not a run id at all): the message names it. */
export class UnknownRun extends Schema.TaggedError<UnknownRun>()("UnknownRun", {
  runId: Schema.String,
  message: Schema.String
}) {}

/** A live run of this server as a snapshot shows it. */
export const viewOf = (live: LiveRun, s: LiveSnapshot): RunningView => ({
  _tag: "Running",
  runId: s.runId,
  runDir: s.runDir,
  createdAt: s.createdAt,
  models: s.models,
  candidates: s.candidates,
  streamed: live.streamed(),
  synthesizer: s.synthesizer,
  elsewhere: undefined,
  live
})

/** A live run of this server as it stands now. */
export const liveView = (live: LiveRun) => Effect.map(live.snapshot, (s) => viewOf(live, s))

/** A finished run from its files: the manifest and, when there is one, the final answer. */
const finishedFromDisk = (runId: string) =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const manifest = yield* store.readManifest(runId)
    const final = yield* store.readRunFile(runId, "final.md").pipe(Effect.option, Effect.map(Option.getOrUndefined))
    return { _tag: "Finished", result: { manifest, final, runDir: path.join(store.root, runId) } } satisfies FinishedView
  })

/**
 * The run as it stands now. A run of this server is read from memory (a live one never touches the
 * disk); any other from its directory under the runs root, and nothing outside it is ever read.
 */
export const readRunView = (runs: LiveRuns, runId: string): Effect.Effect<RunView, UnknownRun | StoreError, RunStore> =>
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

const fromDisk = (runId: string) =>
  finishedFromDisk(runId).pipe(
    Effect.catchTags({
      InvalidRunPath: (e) => new UnknownRun({ runId, message: `${e.message}: not a run id of this server (see list_runs)` }),
      RunFileNotFound: (e) =>
        e.file === "run.json" && !e.message.startsWith("no run")
          ? unfinishedOnDisk(runId)
          : new UnknownRun({ runId, message: `no run ${JSON.stringify(runId)} (see list_runs)` })
    })
  )

/** A run directory without a manifest: another process's live run, or one whose process died. */
const unfinishedOnDisk = (runId: string): Effect.Effect<RunView, UnknownRun | StoreError, RunStore> =>
  Effect.gen(function*() {
    const store = yield* RunStore
    const now = yield* Clock.currentTimeMillis
    return {
      _tag: "Running",
      runId,
      runDir: path.join(store.root, runId),
      createdAt: new Date(now),
      models: [],
      candidates: [],
      streamed: undefined,
      synthesizer: undefined,
      elsewhere: "another process",
      live: undefined
    } satisfies RunningView
  })
