import { Array as Arr, Clock, Effect, Option, Ref } from "effect"
import { plural } from "../../domain/format.js"
import type { RunSettings, StrategyRecord } from "../../domain/manifest.js"
import { OWNER_FILE } from "../../domain/runState.js"
import type { StrategyName } from "../../domain/strategy.js"
import { type RunHandle, RunStore } from "../../services/RunStore.js"
import { Settings } from "../../services/Settings.js"
import { isOpenRouterUrl } from "../../settings/paths.js"
import { type AttachmentPlan, planAttachments, saveAttachments } from "../attachments/plan.js"
import { checkRunRequest } from "../checkRunRequest.js"
import { sampledModels, tooManySamples, unsampledWarning } from "../strategies/self.js"
import { threadChars } from "../thread/turns.js"
import { webFor } from "./callPlan.js"
import type { FanOutPolicy } from "./fanOut.js"
import { initialState, type RunTally } from "./outcome.js"
import type { RunEvent, RunRequest } from "./request.js"
import { makeRunWrites, type RunWrites } from "./writes.js"

/** What a run will do, settled from the request and the settings before anything is paid for. */
export interface RunPlan {
  readonly models: ReadonlyArray<string>
  /** The synthesizer first, then its fallbacks. */
  readonly synthesizers: ReadonlyArray<string>
  readonly policy: FanOutPolicy
  /** Clock time (ms) by which the run must end, if it has a deadline. */
  readonly deadlineAt: number | undefined
  /** As the owner record and the manifest keep them. */
  readonly settings: RunSettings
  readonly strategy: StrategyName
  /** `rank`: the models that rank the answers; `refine`: the models that refine them, each round. */
  readonly judges: ReadonlyArray<string>
  readonly refiners: ReadonlyArray<string>
  /** `refine`: rounds after the candidates'. */
  readonly rounds: number
}

/** A run under way: what every later step reads and records into. */
export interface StartedRun {
  readonly request: RunRequest
  readonly plan: RunPlan
  readonly run: RunHandle
  readonly startedMs: number
  readonly writes: RunWrites
  readonly state: Ref.Ref<RunTally>
  readonly emit: (event: RunEvent) => Effect.Effect<void>
  /** The attached files, who is sent what, and the manifest's records of them. */
  readonly attachments: AttachmentPlan
}

const planRun = Effect.fnUntraced(function*(request: RunRequest, startedMs: number) {
  const settings = yield* Settings
  const given = request.models && request.models.length > 0 ? request.models : settings.models
  // Answers given to a run (a re-synthesis) are its samples already: `self` then only synthesizes them.
  const chosen = request.strategy ?? settings.strategy
  const strategy = chosen === "self" && request.reuse !== undefined ? "synthesize" : chosen
  // `self`: the first model, asked `samples` times; its answers are the candidates.
  const models = strategy === "self" && Arr.isNonEmptyReadonlyArray(given)
    ? sampledModels(given, request.samples ?? settings.samples)
    : given
  const panel = request.panel ?? models
  const primary = request.synthesizer ?? settings.synthesizer
  const synthesizers = [primary, ...settings.fallbackSynthesizers.filter((m) => m !== primary)]
  const deadlineMs = request.deadlineMs ?? Option.getOrUndefined(settings.deadlineMs)
  const deadlineAt = deadlineMs === undefined ? undefined : startedMs + deadlineMs
  // With a deadline, the fan-out stops early enough for the synthesis to fit before it.
  const reserveMs = deadlineMs === undefined
    ? 0
    : Math.min(deadlineMs, Option.getOrElse(settings.synthesisReserveMs, () => Math.round(deadlineMs * 0.4)))
  const policy: FanOutPolicy = {
    cutoffAt: deadlineAt === undefined ? undefined : deadlineAt - reserveMs,
    quorum: request.quorum ?? Option.getOrUndefined(settings.quorum),
    graceMs: request.graceMs ?? settings.graceMs
  }
  // A re-synthesis asks no candidate: nothing searches the web.
  const web = request.reuse === undefined && webFor(request, settings)
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
  return {
    models,
    synthesizers,
    policy,
    deadlineAt,
    settings: runSettings,
    strategy,
    judges: strategy === "rank" ? Option.getOrElse(settings.judges, () => panel) : [],
    refiners: strategy === "refine" ? panel : [],
    rounds: request.rounds ?? settings.rounds
  } satisfies RunPlan
})

/** The manifest's `strategy` before its step ran: its name, and for `self` the model sampled. */
const initialStrategy = (plan: RunPlan): StrategyRecord =>
  plan.strategy === "self"
    ? { name: "self", model: plan.models[0]!, samples: plan.models.length }
    : { name: plan.strategy }

/**
 * Step 1: the request checked (nothing is paid for a run refused), the run directory made with its owner
 * record and the prompt. The run's files are written in the caller's scope, beside the calls.
 */
export const startRun = Effect.fnUntraced(function*(request: RunRequest) {
  const store = yield* RunStore
  const startedMs = yield* Clock.currentTimeMillis
  const plan = yield* planRun(request, startedMs)
  const refused = plan.strategy === "self" ? tooManySamples(plan.models.length, (yield* Settings).maxModels) : undefined
  if (refused !== undefined) return yield* refused
  yield* checkRunRequest({
    prompt: request.prompt,
    contextChars: threadChars(request.thread),
    models: request.reuse ? [] : plan.models,
    synthesizers: plan.synthesizers,
    readers: [...plan.judges, ...Array.from({ length: plan.rounds }, () => plan.refiners).flat()],
    attachedChars: (request.attachments ?? []).reduce((n, a) => n + (a.text?.length ?? 0), 0),
    sampled: plan.strategy === "self",
    quorum: request.reuse ? undefined : plan.policy.quorum,
    deadlineMs: plan.deadlineAt === undefined ? undefined : plan.deadlineAt - startedMs
  })
  if (plan.settings.web === true && plan.settings.baseUrl !== undefined && !isOpenRouterUrl(plan.settings.baseUrl)) {
    yield* Effect.logWarning(
      `web search: ${plan.settings.baseUrl} is not OpenRouter; the web plugin is sent, but this server may ignore it (then no model searches and nothing is cited)`
    )
  }
  const unsampled = unsampledWarning(plan.strategy, request.models)
  if (unsampled !== undefined) yield* Effect.logWarning(unsampled)
  const attachments = yield* planAttachments(request.attachments ?? [], plan.models, request.reuse !== undefined)
  const run = yield* store.makeRunDir()
  const writes = yield* makeRunWrites(run, yield* Effect.scope)
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
    state: yield* Ref.make(initialState(plan.models, initialStrategy(plan))),
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
