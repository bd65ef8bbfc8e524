import { Cause, Option } from "effect"
import { StoreError } from "../../domain/errors.js"
import { roundUsd } from "../../domain/format.js"
import {
  type CallStatus,
  type CandidateRecord,
  type RunStatus,
  type RunUsage,
  type StrategyRecord,
  type SynthesisRecord,
  type Usage
} from "../../domain/manifest.js"
import type { Report } from "../../domain/report.js"
import type { CandidateOutcome } from "./fanOut.js"

// What a run knows while it goes, and what its manifest says of its end: its status, why it has no answer,
// what it cost. Pure, from the run's state.

/** What a run knows while it goes: each candidate's record, the synthesis, the answer. */
export interface RunTally {
  readonly candidates: ReadonlyArray<CandidateRecord | undefined>
  /** Attempts started per candidate, so a cancelled candidate's record is still truthful. */
  readonly attempts: ReadonlyArray<number>
  readonly synthesis: SynthesisRecord | undefined
  /** The synthesizer being asked right now, if any: a run interrupted then records it as cancelled. */
  readonly synthesizing: string | undefined
  readonly final: string | undefined
  /** The run's strategy and what its step did so far. */
  readonly strategy?: StrategyRecord | undefined
  /** The synthesis's disagreement report, once there is an answer. */
  readonly report?: Report | undefined
  /** One model asked alone, its answer the final one (eval's synthesizer-alone baseline): no synthesis is missing. */
  readonly alone?: boolean | undefined
}

export const initialState = (models: ReadonlyArray<string>, strategy?: StrategyRecord): RunTally => ({
  candidates: models.map(() => undefined),
  attempts: models.map(() => 0),
  synthesis: undefined,
  synthesizing: undefined,
  final: undefined,
  strategy
})

export const withOutcome = (outcome: CandidateOutcome) => (s: RunTally): RunTally => ({
  ...s,
  candidates: s.candidates.map((c, i) => (i === outcome.index ? outcome.record : c))
})

export const withAttempt = (index: number, attempt: number) => (s: RunTally): RunTally => ({
  ...s,
  attempts: s.attempts.map((n, i) => (i === index ? attempt : n))
})

/**
 * The calls' usage added up; an answered call that reported none is counted apart, never as 0 tokens, and with no
 * call reporting any the run's tokens are absent. The cost is rounded to the provider's precision (no float noise).
 */
export const sumUsage = (
  records: ReadonlyArray<{ readonly status: CallStatus; readonly usage?: Usage | undefined } | undefined>
): RunUsage => {
  let tokens: { promptTokens: number; completionTokens: number } | undefined
  let cost: number | undefined
  let reasoningTokens: number | undefined
  let cachedTokens: number | undefined
  let unreportedCalls = 0
  let estimatedCalls = 0
  for (const record of records) {
    if (record !== undefined && record.usage === undefined && record.status === "ok") unreportedCalls += 1
    if (!record?.usage) continue
    if (record.usage.estimated === true) estimatedCalls += 1
    tokens = {
      promptTokens: (tokens?.promptTokens ?? 0) + record.usage.promptTokens,
      completionTokens: (tokens?.completionTokens ?? 0) + record.usage.completionTokens
    }
    if (record.usage.cost !== undefined) cost = (cost ?? 0) + record.usage.cost
    if (record.usage.reasoningTokens !== undefined) reasoningTokens = (reasoningTokens ?? 0) + record.usage.reasoningTokens
    if (record.usage.cachedTokens !== undefined) cachedTokens = (cachedTokens ?? 0) + record.usage.cachedTokens
  }
  return {
    ...tokens,
    ...(cost !== undefined ? { cost: roundUsd(cost) } : {}),
    ...(reasoningTokens !== undefined ? { reasoningTokens } : {}),
    ...(cachedTokens !== undefined ? { cachedTokens } : {}),
    ...(unreportedCalls > 0 ? { unreportedCalls } : {}),
    ...(estimatedCalls > 0 ? { estimatedCalls } : {})
  }
}

/** `stepCalls`: the calls the strategy's step made (judges, refinements), which count like the candidates. */
export const statusOf = (state: RunTally, interrupted: boolean, stepCalls: ReadonlyArray<CandidateRecord>): RunStatus => {
  if (state.final === undefined) return interrupted ? "cancelled" : "failed"
  const allAnswered = [...state.candidates, ...stepCalls].every((c) => c?.status === "ok")
  const firstSynthesizerAnswered = state.alone === true ||
    (state.synthesis?.status === "ok" && state.synthesis.failedSynthesizers === undefined)
  return allAnswered && firstSynthesizerAnswered ? "ok" : "partial"
}

/** Why a run stopped on a failure of its own (not a model's): a file it could not write, or an internal error. */
export const stoppedBy = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => "the run stopped on an internal error",
    onSome: (error) => (error instanceof StoreError ? `the run stopped: ${error.message}` : "the run stopped on an internal error")
  })

/** Why a run without an answer has none, in one line. */
export const failureReason = (state: RunTally, status: RunStatus): string | undefined => {
  if (status === "cancelled") return "interrupted before the answer"
  if (status !== "failed") return undefined
  if (state.candidates.every((c) => c !== undefined && c.status !== "ok")) return "no candidate answered"
  if (state.synthesis?.error) return `the synthesis failed: ${state.synthesis.error.message}`
  return "the run stopped before an answer"
}
