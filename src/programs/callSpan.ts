import { Clock, Effect, Either, type Tracer } from "effect"
import type { ProviderError } from "../domain/errors.js"
import type { Completion, ModelRequest } from "../domain/modelCall.js"
import type { RunTraceShape, TracingShape } from "../services/tracing.js"

// The span of one model call, after the OpenTelemetry GenAI semantic conventions: made only when spans are
// exported (services/tracing.ts), so a call pays nothing for it otherwise.

/** What a call is for in its run. */
export type CallRole = "candidate" | "judge" | "refine" | "synthesis"

/** What the span reads of a finished call (a `ModelCall` of callModel.ts). */
interface Finished {
  readonly result: Either.Either<Completion, ProviderError>
  readonly attempts: number
}

/** A message's text, whatever its parts (attached files and images are named, not copied). */
const messagesJson = (request: ModelRequest): string =>
  JSON.stringify(request.messages.map((m) => ({
    role: m.role,
    parts: typeof m.content === "string"
      ? [{ type: "text", content: m.content }]
      : m.content.map((part) =>
        part.type === "text"
          ? { type: "text", content: part.text }
          : { type: part.type === "file" ? "file" : "image", name: part.type === "file" ? part.file.filename : "image" }
      )
  })))

/** The attributes known before the call: what was asked, of whom, for what. */
const requestAttributes = (tracing: TracingShape, request: ModelRequest, role: CallRole | undefined): Record<string, unknown> => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": tracing.provider,
  "gen_ai.request.model": request.model,
  ...(request.temperature !== undefined ? { "gen_ai.request.temperature": request.temperature } : {}),
  ...(request.maxTokens !== undefined ? { "gen_ai.request.max_tokens": request.maxTokens } : {}),
  ...(tracing.server !== undefined ? { "server.address": tracing.server.address, "server.port": tracing.server.port } : {}),
  ...(role !== undefined ? { "parallel_llm.role": role } : {}),
  ...(tracing.content ? { "gen_ai.input.messages": messagesJson(request) } : {})
})

/** The attributes of the outcome: the model that answered, usage, cost, attempts; the answer's text only if asked. */
const annotateOutcome = (span: Tracer.Span, tracing: TracingShape, call: Finished): void => {
  span.attribute("parallel_llm.attempts", call.attempts)
  if (Either.isLeft(call.result)) {
    const error = call.result.left
    span.attribute("parallel_llm.outcome", error._tag === "Timeout" ? "timeout" : "error")
    span.attribute("error.type", error._tag)
    return
  }
  const completion = call.result.right
  span.attribute("parallel_llm.outcome", "ok")
  span.attribute("gen_ai.response.model", completion.servedBy)
  if (completion.finishReason !== undefined) span.attribute("gen_ai.response.finish_reasons", [completion.finishReason])
  if (completion.usage !== undefined) {
    span.attribute("gen_ai.usage.input_tokens", completion.usage.promptTokens)
    span.attribute("gen_ai.usage.output_tokens", completion.usage.completionTokens)
    if (completion.usage.cost !== undefined) span.attribute("parallel_llm.cost_usd", completion.usage.cost)
  }
  if (tracing.content) {
    const output = [{ role: "assistant", parts: [{ type: "text", content: completion.content }], finish_reason: completion.finishReason }]
    span.attribute("gen_ai.output.messages", JSON.stringify(output))
  }
}

/**
 * The request with the run's Broadcast fields (sent where the provider takes them: request.ts): the run's trace,
 * and under a call span its ids (OpenRouter nests its own spans of the call under it).
 */
export const withBroadcast = (
  request: ModelRequest,
  run: RunTraceShape | undefined,
  role: CallRole | undefined,
  span?: Tracer.Span
): ModelRequest =>
  run !== undefined
    ? {
      ...request,
      broadcast: {
        sessionId: run.runId,
        traceId: span?.traceId ?? run.traceId,
        ...(span !== undefined ? { parentSpanId: span.spanId } : {}),
        ...(role !== undefined ? { generationName: role } : {})
      }
    }
    : request

/** An event on the current span, if there is one (an attempt that failed, a cut). */
export const spanEvent = (name: string, attributes: Record<string, unknown>): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.option(Effect.currentSpan),
    (span) => span._tag === "None" ? Effect.void : Effect.map(Clock.currentTimeNanos, (now) => span.value.event(name, now, attributes))
  )

/**
 * `call` in a client span named `chat MODEL`, its outcome set as attributes when it ends. A call cut short
 * (a deadline, the quorum, a cancel) ends `cancelled`, with an event saying so. `call` is given the span,
 * whose ids go upstream (OpenRouter's Broadcast nests its own spans of the call under it).
 */
export const withCallSpan = <A extends Finished>(
  tracing: TracingShape,
  request: ModelRequest,
  role: CallRole | undefined,
  call: (span: Tracer.Span) => Effect.Effect<A>
): Effect.Effect<A> =>
  Effect.flatMap(Effect.orDie(Effect.currentSpan), (span) =>
    call(span).pipe(
      Effect.tap((done) => Effect.sync(() => annotateOutcome(span, tracing, done))),
      Effect.onInterrupt(() =>
        Effect.zipRight(
          Effect.sync(() => span.attribute("parallel_llm.outcome", "cancelled")),
          spanEvent("parallel_llm.cut", { "parallel_llm.reason": "the call was stopped before it ended" })
        )
      )
    )).pipe(
      Effect.withSpan(`chat ${request.model}`, { kind: "client", attributes: requestAttributes(tracing, request, role) })
    )
