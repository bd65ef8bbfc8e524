import type { Effect } from "effect"
import type { Manifest } from "../../domain/manifest.js"
import type { RunHandle } from "../../services/runStore.js"
import type { Attachment } from "../attachments/attachment.js"
import type { Thread } from "../thread/turns.js"
import type { CandidateOutcome } from "./fanOut.js"

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
  /** A step of the strategy (judges ranking, a refinement round) moved on: what it is doing, in one line. */
  | { readonly _tag: "StrategyStep"; readonly message: string }
  | { readonly _tag: "SynthesisStarted"; readonly model: string; readonly candidates: number }
  | { readonly _tag: "SynthesisDelta"; readonly text: string }
  | { readonly _tag: "RunFinished"; readonly manifest: Manifest; readonly runDir: string }

/**
 * What a run is asked, besides its settings: a call's own settings (models, deadline, strategy, …) are a patch
 * of `Settings` provided for the run (see programs/callSettings.ts), which is all the run reads them from.
 */
export interface RunRequest {
  readonly prompt: string
  /**
   * Re-synthesis: the candidates' outcomes of an earlier run (in model order), copied into this run
   * instead of asking the models again; or answers given by the caller (an eval's frozen candidates), with
   * no source run.
   */
  readonly reuse?: { readonly sourceRunId?: string | undefined; readonly outcomes: ReadonlyArray<CandidateOutcome> } | undefined
  readonly onEvent?: ((event: RunEvent) => Effect.Effect<void>) | undefined
  /**
   * Whether `onEvent` is told the pieces of the streamed answers (`CandidateDelta`, `SynthesisDelta`): unless this is
   * false. A caller that has no use for them (a batch) spares every network read of every call an effect.
   */
  readonly deltas?: boolean | undefined
  /** Files attached to the prompt, already read and checked (see attachments/collect.ts). */
  readonly attachments?: ReadonlyArray<Attachment> | undefined
  /** The models that rank or refine when they are not the candidates (an eval's frozen answers come from none). */
  readonly panel?: ReadonlyArray<string> | undefined
  /** A follow-up question: the earlier turns every candidate and the synthesizer see first (see thread/). */
  readonly thread?: Thread | undefined
}

export interface RunResult {
  readonly manifest: Manifest
  /** The final answer, when the run produced one. */
  readonly final: string | undefined
  readonly runDir: string
}
