import type { Effect, Ref } from "effect"
import type { RunSettings } from "../../domain/manifest.js"
import type { RunHandle } from "../../services/runStore.js"
import type { AttachmentPlan } from "../attachments/plan.js"
import type { FanOutPolicy } from "./fanOut.js"
import type { RunTally } from "./outcome.js"
import type { RunEvent, RunRequest } from "./request.js"
import type { RunWrites } from "./writes.js"

// What a run is once started, as every later step (the fan-out, the strategy's step, the synthesis, the
// manifest) reads it: a module of types only, so that run/start.ts and the strategies both import it.

/** What a strategy plans before anything is paid for (see strategies/strategy.ts). */
export interface StrategyPlan {
  /** The candidates it asks, in order (`self`: one model, once per sample). */
  readonly candidates: ReadonlyArray<string>
  /** Its own calls between the fan-out and the synthesis: these models, each of `rounds` times. */
  readonly steps: StepPlan
}

export interface StepPlan {
  /** `rank`: the judges; `refine`: the models that refine, each round; none for `synthesize` and `self`. */
  readonly models: ReadonlyArray<string>
  /** How many times each is asked (`refine`'s rounds after the candidates'). */
  readonly rounds: number
}

/** What a run will do, settled from the request and the settings before anything is paid for. */
export interface RunPlan {
  readonly models: ReadonlyArray<string>
  /** The synthesizer first, then its fallbacks. */
  readonly synthesizers: ReadonlyArray<string>
  readonly policy: FanOutPolicy
  /** Clock time (ms) by which the run must end, if it has a deadline. */
  readonly deadlineAt: number | undefined
  /** As the owner record and the manifest keep them. */
  readonly settings: RunSettings
  /** The strategy's name (src/programs/strategies/registry.ts). */
  readonly strategy: string
  readonly steps: StepPlan
}

/** A run under way: what every later step reads and records into. */
export interface StartedRun {
  readonly request: RunRequest
  readonly plan: RunPlan
  readonly run: RunHandle
  readonly startedMs: number
  readonly writes: RunWrites
  readonly state: Ref.Ref<RunTally>
  readonly emit: (event: RunEvent) => Effect.Effect<void>
  /** The attached files, who is sent what, and the manifest's records of them. */
  readonly attachments: AttachmentPlan
}
