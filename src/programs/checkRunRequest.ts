import { Duration, Effect, Option, Redacted } from "effect"
import { cliAgentOf, isCliAgent } from "../domain/cliAgent.js"
import { RunRefused } from "../domain/errors.js"
import { formatBudget, plural } from "../domain/format.js"
import type { ModelInfo } from "../domain/modelCall.js"
import type { ModelOptions } from "../domain/modelOptions.js"
import { ModelClient } from "../services/modelClient.js"
import { agentProblem, discoverCliAgents } from "../services/providers/cliAgent/discovery.js"
import { Settings } from "../services/settings.js"
import { duplicateModelMessage, firstDuplicate, isKeyInModelId, keyAsModelMessage } from "../settings/checks.js"
import type { SettingsValue } from "../settings/values.js"
import { REPORT_INSTRUCTIONS, SYNTHESIZER_INSTRUCTIONS } from "./buildSynthesisPrompt.js"
import { nearestIds, outsideCatalogue } from "./listConfiguredModels.js"
import { registry } from "./strategies/registry.js"

/** How old the kept model list may be for a refusal to rest on it. */
const RECHECK_AFTER = Duration.minutes(1)

/** Tokens in a text, counted high (3 characters a token, where English averages about 4): a worst case. */
const tokensAtMost = (chars: number) => Math.ceil(chars / 3)

/** What the synthesizer reads besides the prompt and the answers: its instructions and the longer form of the report's. */
export const SYNTHESIS_INSTRUCTION_TOKENS = tokensAtMost(
  SYNTHESIZER_INSTRUCTIONS.length + 2 + Math.max(REPORT_INSTRUCTIONS.structured.length, REPORT_INSTRUCTIONS.text.length)
)
/** What a strategy's own call (a judge, a refinement) reads besides the prompt and the answers: the longest of any strategy. */
export const STEP_INSTRUCTION_TOKENS = tokensAtMost(Math.max(...Object.values(registry).map((s) => s.stepInstructionChars)))

/**
 * The most a run can cost: every candidate reads the prompt and writes `max_tokens` (or, unset, all of
 * its context), then the synthesizer reads the prompt and every candidate at its longest, and writes as much.
 * A model with fallbacks counts as the costliest of them; its own `maxTokens` wins over the run's.
 */
export const worstCaseCost = (input: {
  readonly promptChars: number
  readonly models: ReadonlyArray<string>
  readonly synthesizer: string
  /** The strategy's calls (judges, refinements), each reading the candidates like the synthesizer. */
  readonly readers?: ReadonlyArray<string> | undefined
  readonly maxTokens: number | undefined
  readonly synthesisMaxChars: number
  readonly catalogue: ReadonlyMap<string, ModelInfo>
  /** The config file's per-model options (`maxTokens`, `fallbacks`), by id. */
  readonly modelOptions?: Readonly<Record<string, ModelOptions>>
}): { readonly usd: number } | { readonly unknownPrices: ReadonlyArray<string> } => {
  const promptTokens = tokensAtMost(input.promptChars)
  const unknown: Array<string> = []
  const priceOf = (id: string) => {
    // A CLI agent runs on the user's subscription: no price per call, nothing of it for the budget to bound.
    if (isCliAgent(id)) return undefined
    const info = input.catalogue.get(id)
    if (info?.promptPrice === undefined || info.completionPrice === undefined) {
      unknown.push(id)
      return undefined
    }
    return info
  }
  /** The costliest call among a model and its fallbacks, reading `inputTokens`. */
  const callCost = (id: string, inputTokens: number) => {
    let worst: { usd: number; output: number } | undefined
    for (const model of [id, ...(input.modelOptions?.[id]?.fallbacks ?? [])]) {
      const info = priceOf(model)
      if (!info) continue
      const output = input.modelOptions?.[model]?.maxTokens ?? input.maxTokens ??
        Math.max(0, (info.contextLength ?? 0) - inputTokens)
      const usd = (inputTokens * info.promptPrice! + output * info.completionPrice!) / 1_000_000
      if (worst === undefined || usd > worst.usd) worst = { usd, output }
    }
    return worst
  }
  let total = 0
  let candidatesOutput = 0
  for (const id of input.models) {
    const cost = callCost(id, promptTokens)
    if (!cost) continue
    candidatesOutput += cost.output
    total += cost.usd
  }
  // The synthesizer, and each of the strategy's calls, reads the prompt and every candidate at its longest,
  // after its own instructions.
  const answersTokens = Math.min(candidatesOutput, tokensAtMost(input.synthesisMaxChars))
  for (const reader of input.readers ?? []) total += callCost(reader, promptTokens + STEP_INSTRUCTION_TOKENS + answersTokens)?.usd ?? 0
  total += callCost(input.synthesizer, promptTokens + SYNTHESIS_INSTRUCTION_TOKENS + answersTokens)?.usd ?? 0
  return unknown.length > 0 ? { unknownPrices: [...new Set(unknown)] } : { usd: total }
}

interface CheckedRequest {
  readonly prompt: string
  /** Characters sent besides the prompt (a follow-up's earlier turns): counted in the cost. */
  readonly contextChars?: number | undefined
  readonly models: ReadonlyArray<string>
  readonly synthesizers: ReadonlyArray<string>
  /** Characters of attached text that every candidate reads besides the prompt (images and PDFs are not counted). */
  readonly attachedChars?: number | undefined
  /** The models of the strategy's calls that read the candidates (judges, refinements), each call once. */
  readonly readers?: ReadonlyArray<string> | undefined
  /** The candidates are samples of one model (`self`), named once per sample on purpose. */
  readonly sampled?: boolean | undefined
  /** The run's quorum and deadline (the call's own, else the settings'), checked against the rest. */
  readonly quorum?: number | undefined
  readonly deadlineMs?: number | undefined
}

/** The checks that need the catalogue: a refusal, the worst-case cost within the budget, or nothing to say. */
const verdict = (
  request: CheckedRequest,
  settings: SettingsValue,
  known: ReadonlyArray<ModelInfo>
): RunRefused | { readonly usd: number; readonly budget: number } | undefined => {
  const catalogue = new Map(known.map((m) => [m.id, m] as const))
  if (settings.checkModels) {
    const named = [...request.models, ...request.synthesizers, ...(request.readers ?? [])]
    const withFallbacks = named.flatMap((m) => [m, ...(settings.modelOptions[m]?.fallbacks ?? [])])
    // A `~…-latest` slug the list leaves out is still OpenRouter's to resolve at the call: not refused; CLI agents
    // are checked against the CLIs found on PATH instead (agentsProblem).
    const unknown = [...new Set(withFallbacks)].filter((m) => !catalogue.has(m) && !outsideCatalogue(m, settings.baseUrl))
    const withSuggestion = (id: string) => {
      const near = nearestIds(id, [...catalogue.keys()])
      return near.length > 0 ? `${id} (did you mean ${near.join(", ")}?)` : id
    }
    if (unknown.length > 0) {
      return new RunRefused({
        message: `unknown model${unknown.length === 1 ? "" : "s"} at ${settings.baseUrl}: ${unknown.map(withSuggestion).join(", ")} ` +
          `(see parallel-llm models)`
      })
    }
  }
  if (Option.isNone(settings.maxCost)) return undefined
  const budget = settings.maxCost.value
  const estimate = worstCaseCost({
    promptChars: request.prompt.length + (request.contextChars ?? 0) + (request.attachedChars ?? 0),
    models: request.models,
    synthesizer: request.synthesizers[0] ?? "",
    readers: request.readers,
    maxTokens: Option.getOrUndefined(settings.maxTokens),
    synthesisMaxChars: settings.synthesisMaxChars,
    catalogue,
    modelOptions: settings.modelOptions
  })
  if ("unknownPrices" in estimate) {
    return new RunRefused({
      message: `--max-cost: no price known for ${estimate.unknownPrices.join(", ")}, so the cost cannot be bounded`
    })
  }
  if (estimate.usd > budget) {
    return new RunRefused({
      message: `the worst-case cost is ${formatBudget(estimate.usd)}, over the --max-cost budget of ${formatBudget(budget)} by ` +
        `${formatBudget(estimate.usd - budget)}` +
        (Option.isNone(settings.maxTokens)
          ? " (without --max-tokens every answer may fill its model's context; set it to bound the cost)"
          : "")
    })
  }
  return { usd: estimate.usd, budget }
}

/**
 * What the run's own values contradict, whichever way they were given (flags, an MCP call, a batch line): the key
 * as a model id, a model named twice, a quorum no run of these models can meet, a reserve that leaves no time.
 */
const requestProblem = (request: CheckedRequest, settings: SettingsValue): string | undefined => {
  const key = Option.getOrUndefined(Option.map(settings.apiKey, Redacted.value))
  const keyAt = request.models.findIndex((m) => isKeyInModelId(m, key))
  if (keyAt >= 0) return keyAsModelMessage("models", keyAt + 1)
  if (request.synthesizers.some((m) => isKeyInModelId(m, key))) return keyAsModelMessage("synthesizer")
  const twice = request.sampled === true ? undefined : firstDuplicate(request.models)
  if (twice !== undefined) return duplicateModelMessage("models", twice)
  if (request.quorum !== undefined && request.models.length > 0 && request.quorum > request.models.length) {
    return `quorum ${request.quorum} is more than the ${plural(request.models.length, "candidate model")} of this run: ` +
      `it could never be met (lower --quorum, or name more models)`
  }
  const reserveMs = Option.getOrUndefined(settings.synthesisReserveMs)
  if (request.deadlineMs !== undefined && reserveMs !== undefined && reserveMs >= request.deadlineMs) {
    return `--synthesis-reserve ${reserveMs / 1000} s is not shorter than the deadline of ${request.deadlineMs / 1000} s: ` +
      `no time would be left for the candidates`
  }
  return undefined
}

/** `--check-models` for CLI agents' ids: each one's CLI on PATH and not known to be logged out, else why not. */
export const agentsProblem = (ids: ReadonlyArray<string>, codexConfig: ReadonlyArray<string>): Effect.Effect<string | undefined> => {
  const named = [...new Set(ids)].filter(isCliAgent)
  if (named.length === 0) return Effect.succeed(undefined)
  const clis = [...new Set(named.flatMap((id) => cliAgentOf(id)?.cli ?? []))]
  return Effect.map(discoverCliAgents(codexConfig, clis), (agents) => {
    const problems = named.flatMap((id) => {
      const status = agents.find((a) => a.cli === cliAgentOf(id)?.cli)
      const problem = status === undefined ? undefined : agentProblem(status)
      return problem === undefined ? [] : [`${id}: ${problem}`]
    })
    return problems.length === 0 ? undefined : `CLI agent${problems.length === 1 ? "" : "s"} not ready: ${problems.join("; ")}`
  })
}

/**
 * Refuses, before any paid call, a run that cannot succeed or costs too much: more models than `maxModels`, a prompt over the size cap,
 * (with `checkModels`) a model id the provider does not list, (with `maxCost`) a worst-case cost over
 * the budget. Model id shapes are checked when decoded.
 */
export const checkRunRequest = Effect.fnUntraced(function*(request: CheckedRequest) {
  const settings = yield* Settings
  const contradiction = requestProblem(request, settings)
  if (contradiction !== undefined) return yield* new RunRefused({ message: contradiction })
  // However the list was given (flags, environment, config file, an MCP call, a batch line): one bound.
  if (request.models.length > settings.maxModels) {
    return yield* new RunRefused({
      message: `${request.models.length} candidate models, more than the ${settings.maxModels} allowed in one run (--max-models)`
    })
  }
  // Attached text is sent with the prompt to every candidate: it counts (images and PDFs have their own byte caps).
  const attached = request.attachedChars ?? 0
  if (request.prompt.length + attached > settings.maxPromptChars) {
    return yield* new RunRefused({
      message: `the prompt has ${(request.prompt.length + attached).toLocaleString("en-US")} characters` +
        `${attached > 0 ? ` with its attached text (${attached.toLocaleString("en-US")})` : ""}, more than the ` +
        `${settings.maxPromptChars.toLocaleString("en-US")} allowed (--max-prompt-chars)`
    })
  }
  if (!settings.checkModels && Option.isNone(settings.maxCost)) return
  if (settings.checkModels) {
    const agentRefusal = yield* agentsProblem(
      [...request.models, ...request.synthesizers, ...(request.readers ?? [])],
      settings.codexConfig
    )
    if (agentRefusal !== undefined) return yield* new RunRefused({ message: agentRefusal })
  }
  const client = yield* ModelClient
  const unreadable = (e: { readonly message: string }) =>
    new RunRefused({ message: `cannot fetch the provider's model list to check the run: ${e.message}` })
  // The catalogue the client keeps for an hour (a real one is large), not a fetch per run; a refusal is
  // checked once more against a list at most a minute old, so a model listed or priced since is not refused.
  const cached = verdict(request, settings, yield* client.catalogue.pipe(Effect.mapError(unreadable)))
  const checked = cached instanceof RunRefused
    ? verdict(request, settings, yield* client.catalogueNewerThan(RECHECK_AFTER).pipe(Effect.mapError(unreadable)))
    : cached
  if (checked instanceof RunRefused) return yield* checked
  if (checked !== undefined) {
    yield* Effect.logInfo(`worst-case cost ${formatBudget(checked.usd)}, within the --max-cost budget of ${formatBudget(checked.budget)}`)
  }
})
