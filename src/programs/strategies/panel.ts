import { Clock, Effect, Either, Ref, Schema } from "effect"
import { describeCall } from "../../domain/format.js"
import type { CandidateRecord, StrategyRecord } from "../../domain/manifest.js"
import type { ChatMessage } from "../../domain/modelCall.js"
import { Settings } from "../../services/settings.js"
import { questionAsAsked } from "../attachments/message.js"
import { answersHeading, cutMarker, fairShares, MIN_SHARE, promptSection } from "../buildSynthesisPrompt.js"
import { callModel } from "../callModel.js"
import { modelCallOptions, sentOptions } from "../run/callPlan.js"
import { answeredRecord, failedRecord } from "../run/records.js"
import type { StartedRun } from "../run/started.js"
import { conversationOf } from "../thread/turns.js"

// What the strategy steps share: the answers shown anonymised to a model, and one call of a step (a judge, a
// refinement) made like every other call of the run (retries, the CallGate, the deadline) and recorded.

export interface LabelledAnswer {
  readonly label: string
  readonly content: string
}

/** The answers as `## Candidate X` sections, each cut to its fair share of `budgetChars`: no model id appears. */
export const answerSections = (answers: ReadonlyArray<LabelledAnswer>, budgetChars: number): string => {
  const shares = fairShares(answers.map((a) => a.content.length), budgetChars).map((share, i) =>
    Math.min(answers[i]!.content.length, Math.max(share, MIN_SHARE))
  )
  return answers.map((answer, i) => {
    const keep = shares[i]!
    const cut = answer.content.length - keep
    const text = cut > 0 ? answer.content.slice(0, keep) + cutMarker(cut) : answer.content
    return `## Candidate ${answer.label}\n\n<candidate label="${answer.label}">\n${text}\n</candidate>`
  }).join("\n\n")
}

/** The question as the candidates were asked it (attached text files within half the budget), as the synthesizer gets it. */
export const questionOf = (started: StartedRun, budgetChars: number): string =>
  questionAsAsked(started.request.prompt, started.attachments.files, Math.floor(budgetChars / 2), fairShares)

/**
 * The user message of a step call: the conversation a follow-up continues (as the synthesizer sees it), the
 * user's question, then the anonymised answers.
 */
export const panelMessage = (
  started: StartedRun,
  prompt: string,
  answers: ReadonlyArray<LabelledAnswer>,
  budgetChars: number,
  overhead: number
): string => {
  const conversation = conversationOf(started.request.thread)
  const before = conversation === undefined ? 0 : conversation.length
  return [
    ...(conversation !== undefined ? [conversation, ""] : []),
    ...promptSection(prompt),
    answersHeading(answers.length),
    "",
    answerSections(answers, budgetChars - overhead - before - prompt.length - 200 * answers.length)
  ].join("\n")
}

export interface StepCall {
  /** Without `file`: the step writes the answer and names it. */
  readonly record: CandidateRecord
  readonly content: string | undefined
}

/**
 * One call of a strategy step. With a deadline, it may take at most half of what is left, so that the
 * synthesis still fits; with none left it is not made (recorded as a timeout).
 */
export const stepCall = Effect.fnUntraced(function*(
  started: StartedRun,
  /** What the call is for, in log lines (`judge`, `round 2`). */
  step: string,
  model: string,
  messages: ReadonlyArray<ChatMessage>
) {
  const settings = yield* Settings
  const now = yield* Clock.currentTimeMillis
  const left = started.plan.deadlineAt === undefined ? undefined : Math.floor((started.plan.deadlineAt - now) / 2)
  if (left !== undefined && left <= 0) {
    return {
      content: undefined,
      record: { model, status: "timeout", attempts: 0, error: { tag: "Timeout", message: "No time left before the deadline" } }
    } satisfies StepCall
  }
  // The model's own options (a model object in the config file) and the run's reasoning; no web search.
  const options = modelCallOptions(settings, model, false)
  const call = yield* callModel(
    { model, messages, ...options },
    {
      retries: settings.retries,
      retryBaseDelayMs: settings.retryBaseDelayMs,
      timeoutMs: left === undefined ? settings.timeoutMs : Math.min(settings.timeoutMs, left)
    },
    // rank's step is its judges; refine's are its rounds.
    { role: step === "judge" ? "judge" : "refine" }
  )
  const line = `${step} ${model}: ${describeCall(call)}`
  yield* Either.isRight(call.result) ? Effect.logInfo(line) : Effect.logWarning(line)
  return Either.match(call.result, {
    // Each record says what its model was sent, as candidates' and the synthesis's do.
    onRight: (completion): StepCall => ({
      content: completion.content,
      record: { ...answeredRecord(model, call, completion), options: sentOptions(options) }
    }),
    onLeft: (error): StepCall => ({ content: undefined, record: { ...failedRecord(model, call, error), options: sentOptions(options) } })
  })
})

/** A call of a step cut by an interruption (Ctrl-C, an MCP cancel): what the manifest says of it. */
export const cancelledCall = (model: string): CandidateRecord => ({ model, status: "cancelled", reason: "interrupted", attempts: 0 })

/** Updates the run's strategy record, if it is one of `Record` (it is in the manifest however the run ends). */
export const updateStrategy = <R extends StrategyRecord, I>(started: StartedRun, Record: Schema.Schema<R, I>, f: (record: R) => R) => {
  const isOwn = Schema.is(Record)
  return Ref.update(started.state, (s) => (isOwn(s.strategy) ? { ...s, strategy: f(s.strategy) } : s))
}
