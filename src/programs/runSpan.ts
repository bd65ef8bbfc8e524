import { Context, Effect } from "effect"
import { sha256Hex } from "../domain/hash.js"
import { RunParent, RunTrace, Tracing, underParent } from "../services/tracing.js"
import { spanEvent } from "./callSpan.js"
import type { StartedRun } from "./run/started.js"

/** A trace id for a run whose spans are not exported: its run id's, so the provider still groups its calls. */
const traceIdOf = (runId: string): string => sha256Hex(runId).slice(0, 32)

/**
 * The run's work with its trace: the run id and trace id every call sends upstream (services/tracing.ts) and,
 * when spans are exported, the run's span, under an MCP `tools/call` or a batch item when there is one, at
 * the root of a trace of its own otherwise; every call of the run is a child of it.
 */
export const withRunTrace = <A, E, R>(started: StartedRun, work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.context<never>(), (services) => {
    const tracing = Context.get(services, Tracing)
    const runId = started.run.id
    if (!tracing.enabled) return Effect.provideService(work, RunTrace, { runId, traceId: traceIdOf(runId) })
    const attributes = {
      "parallel_llm.run_id": runId,
      "parallel_llm.strategy": started.plan.strategy,
      "parallel_llm.models": started.plan.models,
      "parallel_llm.synthesizers": started.plan.synthesizers
    }
    return Effect.flatMap(
      Effect.orDie(Effect.currentSpan),
      (span) =>
        Effect.provideService(work, RunTrace, { runId, traceId: span.traceId }).pipe(
          Effect.onInterrupt(() => spanEvent("parallel_llm.cut", { "parallel_llm.reason": "interrupted" }))
        )
    ).pipe(
      Effect.withSpan("parallel_llm.run", { ...underParent(Context.get(services, RunParent)), kind: "internal", attributes })
    )
  })
