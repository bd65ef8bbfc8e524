import { type Array as Arr, Clock, Duration, Effect, Either, LogLevel, Ref } from "effect"
import { Timeout } from "../../domain/errors.js"
import { describeCall, plural } from "../../domain/format.js"
import type { SynthesisRecord } from "../../domain/manifest.js"
import { type Report, type ReportMode, type ReportVia, unavailableReport } from "../../domain/report.js"
import { logsAt } from "../../services/logging.js"
import { ModelClient } from "../../services/modelClient.js"
import { Settings } from "../../services/settings.js"
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
  latencyMs: first.latencyMs + second.latencyMs
})

/**
 * Merges the successful candidates into one answer. The synthesizers are tried in order (the first
 * is the configured one, the rest are fallbacks); the outcome says which one answered, or why none did.
 */
const mergeWithSynthesizers = Effect.fnUntraced(function*(input: {
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
  readonly onDelta: (text: string) => Effect.Effect<void>
}) {
  const settings = yield* Settings
  // Asked once: info lines the level drops are neither built nor sent.
  const info = yield* logsAt(LogLevel.Info)
  const built = yield* buildSynthesisPrompt(input.prompt, input.candidates, settings.synthesisMaxChars, input.ranking, input.conversation)
  const policy = { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs }
  const shared = {
    labels: built.labels,
    ...(built.truncated.length > 0 ? { truncated: built.truncated } : {})
  }
  for (const { model, cutChars } of built.truncated) {
    yield* Effect.logWarning(`${model}: cut by ${cutChars} characters to fit the synthesizer's budget`)
  }

  const failed: Array<NonNullable<SynthesisRecord["failedSynthesizers"]>[number]> = []
  let last: SynthesisRecord | undefined
  /** A synthesizer's time: its timeout, or what is left before the deadline if that is less. */
  const timeLeft = Effect.map(
    Clock.currentTimeMillis,
    (now) => (input.deadlineAt === undefined ? policy.timeoutMs : Math.min(policy.timeoutMs, input.deadlineAt - now))
  )
  for (const model of input.synthesizers) {
    const timeoutMs = yield* timeLeft
    if (timeoutMs <= 0) {
      const error = new Timeout({ model, timeoutMs: 0, message: "No time left before the deadline" })
      yield* Effect.logWarning(`synthesis: no time left before the deadline for ${model}`)
      last = {
        model,
        status: "timeout",
        attempts: 0,
        error: errorInfo(error),
        ...shared,
        ...(failed.length > 0 ? { failedSynthesizers: [...failed] } : {})
      }
      failed.push({ model, attempts: 0, error: errorInfo(error) })
      continue
    }
    yield* input.onStart(model)
    // The catalogue may take a tenth of the synthesizer's time at most; the call gets what is left.
    let via = yield* reportViaFor(settings.reportVia, model, timeoutMs / 10)
    if (info) {
      const report = via === "off" ? "no report" : `report as ${via} output`
      yield* Effect.logInfo(`synthesis: asking ${model} to merge ${plural(input.candidates.length, "answer")} (${report})`)
    }
    // The synthesizer's own options (a model object in the config file) and the run's reasoning; no web search.
    const options = modelCallOptions(settings, model, false)
    const sent = { options: sentOptions(options) }
    const ask = (as: AskedVia, ms: number) =>
      callModel(
        {
          model,
          messages: as === "off" ? built.messages : withReportInstructions(built.messages, as),
          ...options,
          ...(as === "structured" ? { responseFormat: SYNTHESIS_REPLY_FORMAT } : {})
        },
        { ...policy, timeoutMs: ms },
        { onDelta: input.onDelta, role: "synthesis" }
      )
    let call = yield* ask(via, yield* timeLeft)
    // A provider that refuses the response format (a 400) gets the same request once more in plain text.
    if (via === "structured" && Either.isLeft(call.result) && call.result.left._tag === "BadRequest") {
      yield* Effect.logWarning(`synthesis: ${model} refused structured output (${call.result.left.message}); asking in plain text`)
      via = "text"
      call = followedBy(call, yield* ask(via, Math.min(yield* timeLeft, timeoutMs - call.latencyMs)))
    }
    const failedSoFar = failed.length > 0 ? { failedSynthesizers: [...failed] } : {}
    if (Either.isRight(call.result)) {
      const completion = call.result.right
      if (info) yield* Effect.logInfo(`synthesis: ${model} ${describeCall(call)}`)
      const reply = replyOf(completion.content, via)
      if (info && reply.report.status === "unavailable") yield* Effect.logInfo(`synthesis: no disagreement report: ${reply.report.reason}`)
      return {
        content: reply.answer,
        report: reply.report,
        record: {
          ...answeredRecord(model, call, completion),
          ...sent,
          ...shared,
          ...failedSoFar
        }
      } satisfies SynthesisOutcome
    }
    const error = call.result.left
    yield* Effect.logWarning(`synthesis: ${model} ${describeCall(call)}`)
    last = {
      ...failedRecord(model, call, error),
      ...sent,
      ...shared,
      ...failedSoFar
    }
    failed.push({ model, attempts: call.attempts, error: errorInfo(error) })
  }
  // Every synthesizer failed: the record is the last one's, and lists them all.
  const record: SynthesisRecord = last
    ? { ...last, failedSynthesizers: failed }
    : { model: "(none)", status: "error", attempts: 0, ...shared }
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
    onDelta: (text) => emit({ _tag: "SynthesisDelta", text }),
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
