import { Cause, Effect, Option, Schema } from "effect"
import * as path from "node:path"
import type { Manifest } from "../../domain/manifest.js"
import { oneLine } from "../../domain/text.js"
import type { RunResult } from "../run/request.js"
import { strategyNamed, strategySteps } from "../strategies/registry.js"
import { readRunFileAt } from "./runFiles.js"
import type { Scorer, ScorerName } from "./scorers.js"

// The results file of an eval: its lines, how a run becomes one, and how an earlier one is read back.

/** One line of the results file. The last line for a (strategy, id) pair is its current state. */
export const EvalResult = Schema.Struct({
  strategy: Schema.String,
  id: Schema.String,
  line: Schema.Number,
  /** What the run was made from (question, candidates, models, synthesizer): another one is not reused. */
  fingerprint: Schema.String,
  runDir: Schema.NullOr(Schema.String),
  /** The run's status (a run of this process ends with one of its own, never a reader's `interrupted`). */
  status: Schema.Literal("ok", "partial", "failed", "cancelled"),
  scorer: Schema.String,
  /** The dataset's answer the run was scored against, and whether the run's final answer matched it. */
  answer: Schema.String,
  correct: Schema.Boolean,
  /** The final answer as the scorer read it, when it found one. */
  extracted: Schema.optional(Schema.String),
  cost: Schema.NullOr(Schema.Number),
  /** Null when no call of the run reported usage (unknown, not 0). */
  promptTokens: Schema.NullOr(Schema.Number),
  completionTokens: Schema.NullOr(Schema.Number),
  /** Calls that answered without reporting usage: their tokens and cost are unknown, not in the figures above. */
  unreportedCalls: Schema.optional(Schema.Number),
  /** Calls billed without an answer and without usage: their tokens are estimates, their cost unknown. */
  estimatedCalls: Schema.optional(Schema.Number),
  durationMs: Schema.NullOr(Schema.Number),
  error: Schema.optional(Schema.String),
  /** What the strategy's own step did (rank: rankings counted of the judges; refine: rounds answered of those asked). */
  steps: Schema.optional(Schema.Struct({ done: Schema.Number, of: Schema.Number })),
  /** The strategy fell back to a plain synthesis (no ranking counted, a round nobody answered): why. */
  degraded: Schema.optional(Schema.String)
})
export type EvalResult = typeof EvalResult.Type

const decodeResult = Schema.decodeUnknownOption(Schema.parseJson(EvalResult))

export const keyOf = (strategy: string, id: string) => `${strategy}\u0000${id}`

/** The last result per (strategy, id) in a results file; unreadable lines are ignored. */
export const lastResults = (text: string): ReadonlyMap<string, EvalResult> => {
  const last = new Map<string, EvalResult>()
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue
    const result = decodeResult(raw)
    if (Option.isSome(result)) last.set(keyOf(result.value.strategy, result.value.id), result.value)
  }
  return last
}

/** `questions.jsonl` → `questions.eval.jsonl`; a built-in dataset's goes to the current directory. */
export const defaultEvalResultsPath = (datasetFile: string, builtin: string | undefined): string =>
  builtin !== undefined
    ? path.resolve(`${builtin}.eval.jsonl`)
    : datasetFile.endsWith(".jsonl")
    ? `${datasetFile.slice(0, -".jsonl".length)}.eval.jsonl`
    : `${datasetFile}.eval.jsonl`

/** Every synthesizer failed and the run fell back to a candidate's answer: that is no answer of the strategy. */
export const fellBackToCandidate = (manifest: Manifest): boolean => manifest.synthesis?.fallbackToCandidate !== undefined

/** A finished run's result line, scored. */
export const resultOf = (
  base: Pick<EvalResult, "strategy" | "id" | "line" | "fingerprint" | "scorer" | "answer">,
  run: RunResult,
  scorer: Scorer
): EvalResult => {
  const fellBack = fellBackToCandidate(run.manifest)
  const final = fellBack ? undefined : run.final
  const extracted = final === undefined ? undefined : scorer.extract(final)
  const steps = strategySteps(run.manifest.strategy)
  return {
    ...base,
    runDir: run.runDir,
    status: fellBack ? "failed" : run.manifest.status === "interrupted" ? "cancelled" : run.manifest.status,
    correct: final !== undefined && scorer.correct(final, base.answer),
    ...(extracted !== undefined ? { extracted: oneLine(extracted).slice(0, 200) } : {}),
    cost: run.manifest.usage.cost ?? null,
    promptTokens: run.manifest.usage.promptTokens ?? null,
    completionTokens: run.manifest.usage.completionTokens ?? null,
    ...(run.manifest.usage.unreportedCalls !== undefined ? { unreportedCalls: run.manifest.usage.unreportedCalls } : {}),
    ...(run.manifest.usage.estimatedCalls !== undefined ? { estimatedCalls: run.manifest.usage.estimatedCalls } : {}),
    durationMs: run.manifest.durationMs,
    ...(steps !== undefined && strategyNamed(steps.name)?.stepUnit !== undefined ? { steps: { done: steps.done, of: steps.of } } : {}),
    ...(steps?.degraded !== undefined ? { degraded: oneLine(steps.degraded).slice(0, 200) } : {}),
    ...(fellBack
      ? { error: `the synthesis failed (${run.manifest.synthesis?.error?.message ?? "no synthesizer answered"}): not scored` }
      : run.manifest.error !== undefined
      ? { error: run.manifest.error }
      : {})
  }
}

export const failureText = (cause: Cause.Cause<{ readonly message: string }>): string => {
  const failure = Cause.failureOption(cause)
  return Option.isSome(failure) ? failure.value.message : `internal error: ${oneLine(Cause.pretty(cause)).slice(0, 300)}`
}

/** An earlier result under the current scorer and answer: as it is, rescored from its `final.md`, or undefined (run it again). */
export const rescore = Effect.fnUntraced(function*(before: EvalResult, scorerName: ScorerName, answer: string, scorer: Scorer) {
  if (before.scorer === scorerName && before.answer === answer) return before
  if (before.runDir === null) return undefined
  const final = yield* readRunFileAt(before.runDir, "final.md")
  if (Option.isNone(final)) return undefined
  const extracted = scorer.extract(final.value)
  const { extracted: _, ...rest } = before
  return {
    ...rest,
    scorer: scorerName,
    answer,
    correct: scorer.correct(final.value, answer),
    ...(extracted !== undefined ? { extracted: oneLine(extracted).slice(0, 200) } : {})
  } satisfies EvalResult
})
