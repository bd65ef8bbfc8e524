import { type Array as Arr, Clock, Duration, Effect, Either, LogLevel, Random, Ref } from "effect"
import { Timeout } from "../../domain/errors.js"
import { describeCall, plural } from "../../domain/format.js"
import type { SynthesisRecord } from "../../domain/manifest.js"
import { type Report, type ReportMode, type ReportVia, unavailableReport } from "../../domain/report.js"
import { logsAt } from "../../services/logging.js"
import { ModelClient } from "../../services/modelClient.js"
import { Settings } from "../../services/settings.js"
import type { SettingsValue } from "../../settings/values.js"
import { addBilled } from "../answerFold.js"
import { questionAsAsked } from "../attachments/message.js"
import { buildSynthesisPrompt, fairShares, type SynthesisInput, withReportInstructions } from "../buildSynthesisPrompt.js"
import { callModel, type ModelCall } from "../callModel.js"
import { CATALOGUE_WAIT, catalogueWithin } from "../catalogue.js"
import { readReply, STRUCTURED_OUTPUT_PARAMETER, SYNTHESIS_REPLY_FORMAT } from "../synthesisReply.js"
import { conversationOf } from "../thread/turns.js"
import { modelCallOptions, sentOptions } from "./callPlan.js"
import type { CandidateOutcome } from "./fanOut.js"
import { answeredRecord, errorInfo, failedRecord } from "./records.js"
import type { StartedRun } from "./started.js"

export interface SynthesisOutcome {
  /** Without `file`: the caller writes the answer and fills it in. */
  readonly record: SynthesisRecord
  readonly content: string | undefined
  /** The disagreement report that came with the answer; unavailable (with why) when none could be read. */
  readonly report: Report
}

/** How a reply is asked for: with the report in plain text after it, as one structured JSON, or with no report. */
type AskedVia = ReportVia | "off"

/**
 * The `reportVia` setting for this synthesizer. `structured` only where the provider's catalogue says the model
 * supports it, plain text where it does not or where there is no catalogue to ask (most local servers); the
 * catalogue is not even asked otherwise.
 */
const reportViaFor = (mode: ReportMode, model: string, waitMs: number): Effect.Effect<AskedVia, never, ModelClient> =>
  mode !== "structured" ? Effect.succeed(mode) : Effect.map(
    catalogueWithin(Duration.min(CATALOGUE_WAIT, Duration.millis(waitMs))),
    (catalogue) =>
      Either.isRight(catalogue) &&
        catalogue.right.some((m) => m.id === model && (m.supportedParameters ?? []).includes(STRUCTURED_OUTPUT_PARAMETER))
        ? "structured"
        : "text"
  )

/** The reply read as it was asked for: with `off`, all of it is the answer. */
const replyOf = (content: string, via: AskedVia) =>
  via === "off" ? { answer: content, report: unavailableReport("no report was asked for (reportVia off)") } : readReply(content, via)

/** Two calls to one synthesizer, seen as one: attempts and time added up, the second's result. */
const followedBy = (first: ModelCall, second: ModelCall): ModelCall => ({
  result: second.result,
  attempts: first.attempts + second.attempts,
  latencyMs: first.latencyMs + second.latencyMs,
  spent: addBilled(first.spent, second.spent)
})

interface MergeInput {
  readonly prompt: string
  readonly candidates: ReadonlyArray<SynthesisInput>
  readonly synthesizers: ReadonlyArray<string>
  /** The `rank` strategy's verdict; the candidates then come best first (see buildSynthesisPrompt). */
  readonly ranking?: string | undefined
  /** Clock time (ms) by which the run must end; each synthesizer gets at most what is left of it. */
  readonly deadlineAt?: number | undefined
  /** For a follow-up question: the earlier turns, as text. */
  readonly conversation?: string | undefined
  readonly onStart: (model: string) => Effect.Effect<void>
  readonly onDelta?: ((text: string) => Effect.Effect<void>) | undefined
}

type FailedSynthesizer = NonNullable<SynthesisRecord["failedSynthesizers"]>[number]

/** One merge: what every synthesizer's turn reads, and what the turns that failed left behind. */
interface Merge {
  readonly input: MergeInput
  readonly settings: SettingsValue
  /** Asked once: info lines the level drops are neither built nor sent. */
  readonly info: boolean
  readonly built: Effect.Effect.Success<ReturnType<typeof buildSynthesisPrompt>>
  readonly policy: { readonly retries: number; readonly retryBaseDelayMs: number; readonly timeoutMs: number }
  /** What every synthesizer's record carries: the candidates' labels, and which were cut to fit. */
  readonly shared: Pick<SynthesisRecord, "labels" | "truncated">
  /** The synthesizers that failed so far, in order. */
  readonly failed: Array<FailedSynthesizer>
  /** The record of the last one that failed: the outcome's when every one does. */
  last: SynthesisRecord | undefined
}

/** A synthesizer's time: its timeout, or what is left before the deadline if that is less. */
const timeLeft = (merge: Merge) =>
  Effect.map(
    Clock.currentTimeMillis,
    (
      now
    ) => (merge.input.deadlineAt === undefined ? merge.policy.timeoutMs : Math.min(merge.policy.timeoutMs, merge.input.deadlineAt - now))
  )

const failedSoFar = (merge: Merge) => (merge.failed.length > 0 ? { failedSynthesizers: [...merge.failed] } : {})

/** A synthesizer that failed (or got no time): its record kept as the last (the failed list is added once all have failed), and it joins that list. */
const recordFailure = (merge: Merge, record: SynthesisRecord, failure: FailedSynthesizer) => {
  merge.last = record
  merge.failed.push(failure)
}

/** One synthesizer asked, in `via`'s form; a provider that refuses structured output (a 400) is asked once more in plain text. */
const askSynthesizer = Effect.fnUntraced(function*(merge: Merge, model: string, timeoutMs: number) {
  // The catalogue may take a tenth of the synthesizer's time at most; the call gets what is left.
  let via = yield* reportViaFor(merge.settings.reportVia, model, timeoutMs / 10)
  if (merge.info) {
    const report = via === "off" ? "no report" : `report as ${via} output`
    yield* Effect.logInfo(`synthesis: asking ${model} to merge ${plural(merge.input.candidates.length, "answer")} (${report})`)
  }
  // The synthesizer's own options (a model object in the config file) and the run's reasoning; no web search.
  const options = modelCallOptions(merge.settings, model, false)
  const ask = (as: AskedVia, ms: number) =>
    callModel(
      {
        model,
        messages: as === "off" ? merge.built.messages : withReportInstructions(merge.built.messages, as),
        ...options,
        ...(as === "structured" ? { responseFormat: SYNTHESIS_REPLY_FORMAT } : {})
      },
      { ...merge.policy, timeoutMs: ms },
      { onDelta: merge.input.onDelta, role: "synthesis" }
    )
  let call: ModelCall = yield* ask(via, yield* timeLeft(merge))
  if (via === "structured" && Either.isLeft(call.result) && call.result.left._tag === "BadRequest") {
    yield* Effect.logWarning(`synthesis: ${model} refused structured output (${call.result.left.message}); asking in plain text`)
    via = "text"
    call = followedBy(call, yield* ask(via, Math.min(yield* timeLeft(merge), timeoutMs - call.latencyMs)))
  }
  return { call, via, sent: { options: sentOptions(options) } }
})

/** One synthesizer's turn: its outcome if it answered; if not, its failure is recorded and the next one's turn comes. */
const synthesizerTurn = Effect.fnUntraced(function*(merge: Merge, model: string) {
  const timeoutMs = yield* timeLeft(merge)
  if (timeoutMs <= 0) {
    const error = new Timeout({ model, timeoutMs: 0, message: "No time left before the deadline" })
    yield* Effect.logWarning(`synthesis: no time left before the deadline for ${model}`)
    recordFailure(merge, { model, status: "timeout", attempts: 0, error: errorInfo(error), ...merge.shared }, {
      model,
      attempts: 0,
      error: errorInfo(error)
    })
    return undefined
  }
  yield* merge.input.onStart(model)
  const { call, sent, via } = yield* askSynthesizer(merge, model, timeoutMs)
  if (Either.isLeft(call.result)) {
    const error = call.result.left
    yield* Effect.logWarning(`synthesis: ${model} ${describeCall(call)}`)
    recordFailure(merge, { ...failedRecord(model, call, error), ...sent, ...merge.shared }, {
      model,
      attempts: call.attempts,
      error: errorInfo(error)
    })
    return undefined
  }
  const completion = call.result.right
  if (merge.info) yield* Effect.logInfo(`synthesis: ${model} ${describeCall(call)}`)
  const reply = replyOf(completion.content, via)
  if (merge.info && reply.report.status === "unavailable") {
    yield* Effect.logInfo(`synthesis: no disagreement report: ${reply.report.reason}`)
  }
  return {
    content: reply.answer,
    report: reply.report,
    record: { ...answeredRecord(model, call, completion), ...sent, ...merge.shared, ...failedSoFar(merge) }
  } satisfies SynthesisOutcome
})

/**
 * Merges the successful candidates into one answer. The synthesizers are tried in order (the first
 * is the configured one, the rest are fallbacks); the outcome says which one answered, or why none did.
 */
const mergeWithSynthesizers = Effect.fnUntraced(function*(input: MergeInput) {
  const settings = yield* Settings
  const prompt = buildSynthesisPrompt(input.prompt, input.candidates, settings.synthesisMaxChars, input.ranking, input.conversation)
  // With the response cache on, the candidates' order is drawn from the answers themselves: the same answers
  // (a resynth, an eval rerun) make the same request, which the cache can answer.
  const built = yield* settings.cacheTtl > 0
    ? Effect.withRandom(prompt, Random.make(input.candidates.map((c) => `${c.model}\u0000${c.content}`).join("\u0001")))
    : prompt
  const merge: Merge = {
    input,
    settings,
    info: yield* logsAt(LogLevel.Info),
    built,
    policy: { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs },
    shared: { labels: built.labels, ...(built.truncated.length > 0 ? { truncated: built.truncated } : {}) },
    failed: [],
    last: undefined
  }
  for (const { model, cutChars } of built.truncated) {
    yield* Effect.logWarning(`${model}: cut by ${cutChars} characters to fit the synthesizer's budget`)
  }
  for (const model of input.synthesizers) {
    const outcome = yield* synthesizerTurn(merge, model)
    if (outcome !== undefined) return outcome
  }
  // Every synthesizer failed: the record is the last one's, and lists them all.
  const record: SynthesisRecord = merge.last
    ? { ...merge.last, failedSynthesizers: merge.failed }
    : { model: "(none)", status: "error", attempts: 0, ...merge.shared }
  return { content: undefined, record, report: unavailableReport("no synthesizer answered") } satisfies SynthesisOutcome
})

/**
 * Step 3: the answers merged, the synthesizers tried in turn. A run never ends without an answer while a
 * candidate answered: when every synthesizer fails, the first answer is the final one, said plainly.
 */
export const synthesizeAnswers = Effect.fnUntraced(function*(
  { attachments, emit, plan, request, state }: StartedRun,
  answered: Arr.NonEmptyReadonlyArray<CandidateOutcome & { readonly content: string; readonly label?: string }>,
  ranking?: string
) {
  const settings = yield* Settings
  const synthesis = yield* mergeWithSynthesizers({
    // The question as the candidates were asked it: their attached text files within half the budget.
    prompt: questionAsAsked(request.prompt, attachments.files, Math.floor(settings.synthesisMaxChars / 2), fairShares),
    ranking,
    candidates: answered.map((o) => ({ model: o.model, content: o.content, citations: o.record.citations, label: o.label })),
    synthesizers: plan.synthesizers,
    deadlineAt: plan.deadlineAt,
    conversation: conversationOf(request.thread),
    onDelta: request.deltas === false ? undefined : (text) => emit({ _tag: "SynthesisDelta", text }),
    onStart: (model) =>
      Ref.update(state, (s) => ({ ...s, synthesizing: model })).pipe(
        Effect.zipRight(emit({ _tag: "SynthesisStarted", model, candidates: answered.length }))
      )
  })
  const fallback = answered[0]
  const final = synthesis.content ??
    `> **Note:** the synthesis failed (${synthesis.record.error?.message ?? "no synthesizer answered"}), ` +
      `so this is the answer of \`${fallback.model}\` alone.\n\n${fallback.content}`
  const file = "final.md"
  const record: SynthesisRecord = synthesis.content !== undefined
    ? { ...synthesis.record, file }
    : { ...synthesis.record, file, fallbackToCandidate: fallback.model }
  const report = synthesis.content !== undefined
    ? synthesis.report
    : unavailableReport("every synthesizer failed, so the answer is one candidate's alone")
  yield* Ref.update(state, (s) => ({ ...s, synthesis: record, final, report }))
})
