import { Clock, Effect, Option, Ref, type Scope } from "effect"
import { RunRefused } from "../../domain/errors.js"
import { plural } from "../../domain/format.js"
import type { RunSettings } from "../../domain/manifest.js"
import { OWNER_FILE } from "../../domain/runState.js"
import { RunStore } from "../../services/runStore.js"
import { Settings } from "../../services/settings.js"
import { isOpenRouterUrl } from "../../settings/paths.js"
import type { SettingsValue } from "../../settings/values.js"
import { planAttachments, saveAttachments } from "../attachments/plan.js"
import { checkRunRequest } from "../checkRunRequest.js"
import { strategyNamed, unknownStrategy } from "../strategies/registry.js"
import { synthesize } from "../strategies/synthesize.js"
import { threadChars } from "../thread/turns.js"
import type { FanOutPolicy } from "./fanOut.js"
import { initialState } from "./outcome.js"
import type { RunRequest } from "./request.js"
import type { RunPlan, StartedRun } from "./started.js"
import { makeRunWrites } from "./writes.js"

/**
 * The run's strategy: the one named, but a sampling strategy over given answers (a re-synthesis's) just
 * synthesizes them. A name no strategy has is refused here, before any call, whatever it came from (the
 * entry points refuse it earlier, naming the flag, variable, key or argument: cli/settingsOptions.ts).
 */
const strategyFor = (request: RunRequest, settings: SettingsValue) => {
  const named = strategyNamed(settings.strategy)
  if (named === undefined) return Effect.fail(new RunRefused({ message: `strategy: ${unknownStrategy(settings.strategy)}` }))
  return Effect.succeed(request.reuse !== undefined && named.samples ? synthesize : named)
}

type ChosenStrategy = Effect.Effect.Success<ReturnType<typeof strategyFor>>

const planRun = (request: RunRequest, settings: SettingsValue, startedMs: number, strategy: ChosenStrategy) => {
  const planned = strategy.plan({ settings, models: settings.models, panel: request.panel })
  const models = planned.candidates
  const primary = settings.synthesizer
  const synthesizers = [primary, ...settings.fallbackSynthesizers.filter((m) => m !== primary)]
  const deadlineMs = Option.getOrUndefined(settings.deadlineMs)
  const deadlineAt = deadlineMs === undefined ? undefined : startedMs + deadlineMs
  // With a deadline, the fan-out stops early enough for the synthesis to fit before it.
  const reserveMs = deadlineMs === undefined
    ? 0
    : Math.min(deadlineMs, Option.getOrElse(settings.synthesisReserveMs, () => Math.round(deadlineMs * 0.4)))
  const policy: FanOutPolicy = {
    cutoffAt: deadlineAt === undefined ? undefined : deadlineAt - reserveMs,
    quorum: Option.getOrUndefined(settings.quorum),
    graceMs: settings.graceMs
  }
  // A re-synthesis asks no candidate: nothing searches the web.
  const web = request.reuse === undefined && settings.web
  const runSettings: RunSettings = {
    models,
    synthesizer: primary,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    retries: settings.retries,
    temperature: settings.temperature,
    ...Option.match(settings.maxTokens, { onNone: () => ({}), onSome: (maxTokens) => ({ maxTokens }) }),
    baseUrl: settings.baseUrl,
    fallbackSynthesizers: synthesizers.slice(1),
    stream: settings.stream,
    ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    ...(policy.quorum !== undefined ? { quorum: policy.quorum, graceMs: policy.graceMs } : {}),
    ...Option.match(settings.reasoning, { onNone: () => ({}), onSome: (reasoning) => ({ reasoning }) }),
    ...(web ? { web } : {})
  }
  const plan: RunPlan = {
    models,
    synthesizers,
    policy,
    deadlineAt,
    settings: runSettings,
    strategy: strategy.name,
    steps: planned.steps
  }
  return { plan, planned }
}

/**
 * Step 1: the request checked (nothing is paid for a run refused), the run directory made with its owner
 * record and the prompt. The run's files are written in `scope`, the caller's, beside the calls: given rather
 * than read from the context, so that a run provides no `Scope` service (an `Effect.locally` per run).
 */
export const startRun = Effect.fnUntraced(function*(request: RunRequest, scope: Scope.Scope) {
  const store = yield* RunStore
  const startedMs = yield* Clock.currentTimeMillis
  const settings = yield* Settings
  const strategy = yield* strategyFor(request, settings)
  const { plan, planned } = planRun(request, settings, startedMs, strategy)
  const refused = strategy.refusal(planned, settings)
  if (refused !== undefined) return yield* new RunRefused({ message: refused })
  yield* checkRunRequest({
    prompt: request.prompt,
    contextChars: threadChars(request.thread),
    models: request.reuse ? [] : plan.models,
    synthesizers: plan.synthesizers,
    readers: Array.from({ length: plan.steps.rounds }, () => plan.steps.models).flat(),
    attachedChars: (request.attachments ?? []).reduce((n, a) => n + (a.text?.length ?? 0), 0),
    sampled: strategy.samples,
    quorum: request.reuse ? undefined : plan.policy.quorum,
    deadlineMs: plan.deadlineAt === undefined ? undefined : plan.deadlineAt - startedMs
  })
  if (plan.settings.web === true && plan.settings.baseUrl !== undefined && !isOpenRouterUrl(plan.settings.baseUrl)) {
    yield* Effect.logWarning(
      `web search: ${plan.settings.baseUrl} is not OpenRouter; the web search tool is sent (the web plugin if it refuses the tool), ` +
        `but this server may ignore both (then no model searches and nothing is cited)`
    )
  }
  const attachments = yield* planAttachments(request.attachments ?? [], plan.models, request.reuse !== undefined)
  const run = yield* store.makeRunDir()
  const writes = makeRunWrites(run, scope)
  // The owner record carries the settings, so a run whose process dies can still be read and resynthesized.
  // It is written beside the first calls, not before them (a run without one reads as running); it is only
  // for readers, so a failure to write it is said, not counted against the run's answer.
  yield* writes.save(
    store.writeOwner(run, plan.settings, attachments.records, request.thread?.parent, plan.strategy).pipe(
      Effect.catchAll((e) => Effect.as(Effect.logWarning(`${e.message}: a reader cannot tell this run's process`), OWNER_FILE))
    )
  )
  yield* writes.save(store.writePrompt(run, request.prompt))
  yield* saveAttachments(run, attachments, writes.save)
  return {
    request,
    plan,
    run,
    startedMs,
    writes,
    state: yield* Ref.make(initialState(plan.models, strategy.record(planned))),
    emit: request.onEvent ?? (() => Effect.void),
    attachments
  } satisfies StartedRun
})

/** The run's first log line and event. */
export const announceRun = ({ emit, plan, request, run }: StartedRun) => {
  const what = request.reuse === undefined
    ? `asking ${plural(plan.models.length, "model")} (at most ${plan.settings.concurrency} at a time)`
    : request.reuse.sourceRunId !== undefined
    ? `synthesizing again the answers of run ${request.reuse.sourceRunId}`
    : `synthesizing ${plural(request.reuse.outcomes.length, "given answer")}`
  return Effect.logInfo(`run ${run.id}: ${what}, files in ${run.dir}`).pipe(
    Effect.zipRight(emit({ _tag: "RunStarted", run, models: plan.models }))
  )
}
