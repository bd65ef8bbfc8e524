import { type Clock, Context, Duration, Effect, Either, Exit, Schedule } from "effect"
import { isTransient, type ProviderError, retryAfterOf, Timeout } from "../domain/errors.js"
import { formatSeconds } from "../domain/format.js"
import type { Completion, ModelRequest } from "../domain/modelCall.js"
import { CallGate } from "../services/callGate.js"
import { ModelClient } from "../services/modelClient.js"
import { RunTrace, Tracing } from "../services/tracing.js"
import { addBilled, type BilledUsage, billedUsage, foldAnswer, type FoldHooks, streamedText } from "./answerFold.js"
import { withCallBudget } from "./callBudget.js"
import { type CallRole, spanEvent, withBroadcast, withCallSpan } from "./callSpan.js"

export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly retries: number
  /** First backoff delay; it doubles after each failure, with jitter, up to `MAX_BACKOFF`. */
  readonly retryBaseDelayMs: number
}

const MAX_BACKOFF = Duration.seconds(30)

/**
 * Exponential backoff with jitter for transient failures only, never sooner than the server's
 * Retry-After. The schedule's input is the failure, so the delay can read it.
 */
export const retrySchedule = (policy: RetryPolicy): Schedule.Schedule<ProviderError, ProviderError> =>
  Schedule.exponential(Duration.millis(policy.retryBaseDelayMs)).pipe(
    Schedule.union(Schedule.spaced(MAX_BACKOFF)),
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(policy.retries)),
    Schedule.zipRight(Schedule.identity<ProviderError>()),
    Schedule.whileInput(isTransient),
    Schedule.modifyDelay((error, delay) => {
      const retryAfter = retryAfterOf(error)
      return retryAfter === undefined ? delay : Duration.max(delay, Duration.millis(retryAfter))
    })
  )

/** Schedules are values: one per policy, built once, rather than once per call. */
const schedules = new Map<string, Schedule.Schedule<ProviderError, ProviderError>>()
const scheduleFor = (policy: RetryPolicy) => {
  const key = `${policy.retries}/${policy.retryBaseDelayMs}`
  const known = schedules.get(key)
  if (known !== undefined) return known
  const schedule = retrySchedule(policy)
  schedules.set(key, schedule)
  return schedule
}

/**
 * `attempt` under the retry schedule, its outcome as data, `failed` told of each attempt that failed. Most calls
 * succeed at once: the schedule is only driven once an attempt has failed, its first input being that failure
 * (the same decisions as `Effect.either(Effect.retry(Effect.tapError(attempt, failed), schedule))`, with one
 * match on the first attempt instead of three).
 */
const withRetries = <A>(
  attempt: Effect.Effect<A, ProviderError>,
  policy: RetryPolicy,
  failed: (error: ProviderError) => Effect.Effect<void>
): Effect.Effect<Either.Either<A, ProviderError>> =>
  Effect.matchEffect(attempt, {
    onSuccess: (value) => Effect.succeed(Either.right(value)),
    onFailure: (first) => {
      let replay: ProviderError | undefined = first
      const retried = Effect.tapError(attempt, failed)
      const again = Effect.suspend(() => {
        if (replay === undefined) return retried
        const failure = replay
        replay = undefined
        return Effect.fail(failure)
      })
      return Effect.zipRight(failed(first), Effect.either(Effect.retry(again, scheduleFor(policy))))
    }
  })

/** A failed attempt: a debug line, and an event of the call's span when spans are exported. */
const attemptFailed = (model: string, n: number, error: ProviderError, retry: boolean, traced: boolean): Effect.Effect<void> => {
  const logged = Effect.logDebug(`${model}: attempt ${n} failed: ${error.message}${retry ? " (will retry)" : ""}`)
  if (!traced) return logged
  const event = { "parallel_llm.attempt": n, "error.type": error._tag, "parallel_llm.will_retry": retry }
  return Effect.zipRight(logged, spanEvent("parallel_llm.attempt_failed", event))
}

/** What the caller hears of a call as it goes: each attempt, each read's text, the text so far (see answerFold.ts). */
export interface CallHooks extends FoldHooks {
  readonly onAttempt?: ((attempt: number) => Effect.Effect<void>) | undefined
  /** What the call is for, in its span (when spans are exported) and upstream (`generation_name`). */
  readonly role?: CallRole | undefined
}

export interface ModelCall {
  readonly result: Either.Either<Completion, ProviderError>
  readonly attempts: number
  readonly latencyMs: number
  /** What the attempts that gave no answer were billed (reported, or estimated): see answerFold's billedUsage. */
  readonly spent?: BilledUsage | undefined
}

/** The characters of a request's text: what an estimate of its prompt tokens is made from. */
const promptCharsOf = (request: ModelRequest): number =>
  request.messages.reduce(
    (n, m) =>
      n + (typeof m.content === "string" ? m.content.length : m.content.reduce((k, p) => k + (p.type === "text" ? p.text.length : 0), 0)),
    0
  )

/**
 * The fold's text and usage, kept by the call too: an attempt that ends without an answer is billed all the
 * same. The fold's `onEnd` adds what an attempt that failed or was cut had been billed (it runs on interruption too).
 */
const billing = (request: ModelRequest, hooks: CallHooks) => {
  const streamed = hooks.streamed ?? streamedText()
  streamed.spent = undefined
  const onEnd = (exit: Exit.Exit<Completion, ProviderError>) => {
    if (Exit.isFailure(exit)) streamed.spent = addBilled(streamed.spent, billedUsage(streamed, promptCharsOf(request)))
    hooks.onEnd?.(exit)
  }
  return { streamed, folded: { ...hooks, streamed, onEnd } }
}

/**
 * One model's whole call: attempts under the retry schedule, all of them bounded by `timeoutMs`
 * so a run's wall time is predictable. Each attempt folds the client's stream of parts once
 * (answerFold.ts), starting `hooks.streamed` again: after a cut it holds what the last attempt streamed.
 * Never fails: the outcome is data, so one model's failure cannot cancel the others. Interruption still propagates (and aborts the HTTP request).
 *
 * Each attempt holds a permit of the {@link CallGate} (unbounded unless a batch shares one): the
 * time budget and the latency start when the first request goes out, not while it waits for a
 * permit, so a busy batch does not time out calls that were never sent. Backoff sleeps between
 * attempts hold no permit.
 */
export const callModel = (
  request: ModelRequest,
  policy: CallPolicy,
  hooks: CallHooks = {}
): Effect.Effect<ModelCall, never, ModelClient> =>
  // One look at the context and the clock for the whole call: two reads, where a generator's steps cost five more.
  Effect.contextWithEffect((services: Context.Context<ModelClient>) =>
    Effect.clockWith((clock) => callWith(services, clock, request, policy, hooks))
  )

type CallPolicy = RetryPolicy & { readonly timeoutMs: number }

const callWith = (
  services: Context.Context<ModelClient>,
  clock: Clock.Clock,
  request: ModelRequest,
  policy: CallPolicy,
  hooks: CallHooks
): Effect.Effect<ModelCall> => {
  const client = Context.get(services, ModelClient)
  const gate = Context.get(services, CallGate)
  const tracing = Context.get(services, Tracing)
  const run = Context.get(services, RunTrace)
  /** The request as sent: with the run's Broadcast fields where the provider takes them (see services/tracing.ts). */
  let sent = withBroadcast(request, run, hooks.role)
  // Local to this call and only touched by its own fibers: plain variables, not Refs.
  let attempts = 0
  /** Clock time at which the first request went out: the time budget starts then. */
  let sentAt: number | undefined

  const { folded, streamed } = billing(request, hooks)
  const timedOut = (): Either.Either<Completion, ProviderError> =>
    Either.left(
      new Timeout({
        model: request.model,
        timeoutMs: policy.timeoutMs,
        message: `Timed out after ${formatSeconds(policy.timeoutMs)} (retries included)`
      })
    )

  // The call against its budget, which starts when the first request goes out: a call past it is
  // interrupted, which aborts its request (callBudget.ts: one timer per clock, not a race per call).
  const whole = Effect.map(
    withCallBudget(clock, (budget) => {
      const attempt = gate.withPermit(
        Effect.suspend(() => {
          const n = ++attempts
          const answer = foldAnswer(request.model, client.stream(sent), folded)
          const tried = hooks.onAttempt === undefined ? answer : Effect.zipRight(hooks.onAttempt(n), answer)
          if (sentAt !== undefined) return tried
          sentAt = clock.unsafeCurrentTimeMillis()
          return Effect.zipRight(budget.start(policy.timeoutMs), tried)
        })
      )
      // Told as the attempt that failed ends (`attempts` is its number until the next one starts).
      const failed = (error: ProviderError) =>
        attemptFailed(request.model, attempts, error, isTransient(error) && attempts <= policy.retries, tracing.enabled)
      return withRetries(attempt, policy, failed)
    }, timedOut),
    (result): ModelCall => {
      const finished = clock.unsafeCurrentTimeMillis()
      return { result, attempts, latencyMs: finished - (sentAt ?? finished), spent: streamed.spent }
    }
  )
  if (!tracing.enabled) return whole
  // Exported spans: the call in a span of its own, whose ids go upstream with the request.
  return withCallSpan(tracing, request, hooks.role, (span) => {
    sent = withBroadcast(request, run, hooks.role, span)
    return whole
  })
}
