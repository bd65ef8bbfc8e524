import { Schema } from "effect"
import { AttachmentRecord, RunSettings } from "./manifest.js"

// Who owns a run directory while its run is live, and what a reader concludes from it.

/** The owner record's file name inside a run directory: written when the run is made, removed when `run.json` lands. */
export const OWNER_FILE = "owner.json"

/** `owner.json`: the process writing the run, and the run's settings (so a run whose writer died can be resynthesized). */
export const OwnerRecord = Schema.Struct({
  // A positive integer: kill(0 or -1, 0) would probe a whole process group, or every process.
  pid: Schema.Int.pipe(Schema.positive()),
  host: Schema.String,
  /** When the owning process started: with the pid, it tells a live owner from a later process that got the same pid. */
  processStartedAt: Schema.String,
  /** When the run was made. */
  createdAt: Schema.String,
  /** The run's models, synthesizer and limits (absent only for runs made without them, in tests). */
  settings: Schema.optional(RunSettings),
  /** The attached files, so that an interrupted run still has them (resynth, follow-ups). */
  attachments: Schema.optional(Schema.Array(AttachmentRecord)),
  /** A follow-up's parent run, so that an interrupted follow-up stays one (resynth keeps its thread). */
  parent: Schema.optional(Schema.String),
  /** The run's aggregation strategy, so that a resume knows which interrupted runs a re-synthesis may finish (absent in older records). */
  strategy: Schema.optional(Schema.String)
})
export type OwnerRecord = typeof OwnerRecord.Type

/**
 * finished: `run.json` is there. running: its owner is alive (or cannot be judged yet). interrupted: the
 * owner is gone and never wrote `run.json`.
 */
export type RunState = "finished" | "running" | "interrupted"

/**
 * A run of another host cannot be probed: it counts as running until this long after its creation.
 * No single run lives this long (every call has a timeout), so an older one lost its writer.
 */
export const FOREIGN_RUN_STALE_MS = 24 * 60 * 60 * 1000

/**
 * A run directory without an owner record and without a manifest: made by a version that wrote no owner
 * record, or its writer died between the two first steps. It counts as running only this long after creation.
 */
export const UNOWNED_RUN_STALE_MS = 10 * 60 * 1000

/** How far a process's start time read from the OS may be from the one recorded, for the same process. */
export const START_TIME_TOLERANCE_MS = 10_000

/** What the owner's host says of the owner's pid, when the reader is on that host. */
export type Liveness =
  | { readonly _tag: "NoSuchProcess" }
  /** The pid is alive; `startedAtMs` is its start time when the OS tells it. */
  | { readonly _tag: "Alive"; readonly startedAtMs: number | undefined }

/** The state of a run from what is on disk and, for an owner on this host, what its pid looks like. */
export const decideRunState = (input: {
  readonly hasManifest: boolean
  readonly owner: OwnerRecord | undefined
  /** When the run was made (from its id), for runs whose owner cannot be asked. */
  readonly createdAtMs: number
  readonly nowMs: number
  readonly host: string
  /** What this host says of the owner's pid; only looked at for an owner on this host. */
  readonly probe: Liveness | undefined
}): RunState => {
  if (input.hasManifest) return "finished"
  const age = input.nowMs - input.createdAtMs
  const owner = input.owner
  if (owner === undefined) return age > UNOWNED_RUN_STALE_MS ? "interrupted" : "running"
  if (owner.host !== input.host) return age > FOREIGN_RUN_STALE_MS ? "interrupted" : "running"
  const probe = input.probe
  if (probe === undefined) return "running"
  if (probe._tag === "NoSuchProcess") return "interrupted"
  if (probe.startedAtMs === undefined) return "running"
  // The pid is alive but belongs to a process started at another time: the owner died and its pid was reused.
  return Math.abs(probe.startedAtMs - Date.parse(owner.processStartedAt)) > START_TIME_TOLERANCE_MS ? "interrupted" : "running"
}

/** `YYYYMMDD-HHMMSS-mmm-…` back to the time it was made at. */
export const runIdTime = (id: string): number | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\d{3})-/.exec(id)
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!) : undefined
}
