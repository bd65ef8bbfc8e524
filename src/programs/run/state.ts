import type { CandidateRecord, SynthesisRecord } from "../../domain/manifest.js"
import type { CandidateOutcome } from "./fanOut.js"

/** Where a run stands, from which its manifest is written however it ends. */
export interface RunState {
  readonly candidates: ReadonlyArray<CandidateRecord | undefined>
  /** Attempts started per candidate, so a cancelled candidate's record is still truthful. */
  readonly attempts: ReadonlyArray<number>
  readonly synthesis: SynthesisRecord | undefined
  /** The synthesizer being asked right now, if any: a run interrupted then records it as cancelled. */
  readonly synthesizing: string | undefined
  readonly final: string | undefined
}

export const initialState = (models: ReadonlyArray<string>): RunState => ({
  candidates: models.map(() => undefined),
  attempts: models.map(() => 0),
  synthesis: undefined,
  synthesizing: undefined,
  final: undefined
})

export const withOutcome = (outcome: CandidateOutcome) => (s: RunState): RunState => ({
  ...s,
  candidates: s.candidates.map((c, i) => (i === outcome.index ? outcome.record : c))
})

export const withAttempt = (index: number, attempt: number) => (s: RunState): RunState => ({
  ...s,
  attempts: s.attempts.map((n, i) => (i === index ? attempt : n))
})
