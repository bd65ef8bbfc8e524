import { Effect, Either, Option } from "effect"
import { cliAgentOf, isCliAgent } from "../domain/cliAgent.js"
import { isLatestSlug } from "../domain/model.js"
import { editDistance, stripControl } from "../domain/text.js"
import { ModelClient } from "../services/modelClient.js"
import { agentProblem, type CliAgentStatus, discoverCliAgents } from "../services/providers/cliAgent/discovery.js"
import { Settings } from "../services/settings.js"
import { isOpenRouterUrl } from "../settings/paths.js"
import { presetPanels } from "../settings/presets.js"

export interface ConfiguredModel {
  readonly role: "candidate" | "synthesizer" | "fallback"
  readonly id: string
  /**
   * Whether the provider lists it; undefined when the list could not be fetched, or for a `~…-latest` slug it
   * leaves out (resolved at each call, not unknown).
   */
  readonly found: boolean | undefined
  /** A `~…-latest` slug: the model it resolves to now, when the list says (else only a call's `servedBy` tells). */
  readonly resolvesTo?: string | undefined
  /** A `~…-latest` slug: OpenRouter picks the family's newest model at each call. */
  readonly latest?: boolean | undefined
  readonly contextLength?: number | undefined
  /** USD per million tokens. */
  readonly promptPrice?: number | undefined
  readonly completionPrice?: number | undefined
  /** The provider lists the price as variable (a router): unpriced. */
  readonly variablePrice?: boolean | undefined
  /** For an id the provider does not list: the nearest ids it does. */
  readonly suggestions?: ReadonlyArray<string> | undefined
  /** A CLI agent's id: why its CLI cannot answer here (not on PATH, not logged in), when it cannot. */
  readonly problem?: string | undefined
}

/** A CLI agent's id as the CLIs found say: found when its CLI is on PATH and not known to be logged out. */
const agentEntry = (role: ConfiguredModel["role"], id: string, agents: ReadonlyArray<CliAgentStatus>): ConfiguredModel | undefined => {
  const agent = cliAgentOf(id)
  const status = agents.find((a) => a.cli === agent?.cli)
  if (status === undefined) return undefined
  const problem = agentProblem(status)
  return { role, id, found: problem === undefined, ...(problem !== undefined ? { problem } : {}) }
}

/**
 * A `~vendor/family-latest` slug on OpenRouter: resolved at each call, so not unknown when the model list leaves
 * it out. Another server has no such slugs: there it is an id like any other.
 */
export const resolvedAtCall = (id: string, baseUrl: string): boolean => isLatestSlug(id) && isOpenRouterUrl(baseUrl)

/**
 * An id `--check-models` does not look for in the provider's catalogue: a latest slug OpenRouter resolves at the
 * call, or a CLI agent's, which is checked against the CLIs on PATH instead (`agentsProblem` in checkRunRequest.ts).
 */
export const outsideCatalogue = (id: string, baseUrl: string): boolean => resolvedAtCall(id, baseUrl) || isCliAgent(id)

/** How many of a server's ids `models` names when none of the configured ones is among them. */
const OFFERED_SHOWN = 20

/**
 * The model's name without its vendor or tag: `gpt-5` of `openai/gpt-5`, `llama3.2` of `llama3.2:3b` (Ollama's
 * tags), the whole id when it has neither.
 */
const nameOf = (id: string) => id.slice(id.indexOf("/") + 1).replace(/:[^:/]*$/, "").toLowerCase()

/**
 * Up to three known ids close to `id`, nearest first: the same name under another vendor or tag (or none), or a
 * few edits away (a quarter of the id's length at most). An id far from every known one gets no suggestion.
 */
export const nearestIds = (id: string, known: ReadonlyArray<string>): ReadonlyArray<string> => {
  const lower = id.toLowerCase()
  const allowed = Math.max(1, Math.floor(id.length / 4))
  return known
    .map((k) => ({ k, d: editDistance(lower, k.toLowerCase()), sameName: nameOf(k) === nameOf(id) }))
    .filter((x) => x.sameName || x.d <= allowed)
    .sort((x, y) => Number(y.sameName) - Number(x.sameName) || x.d - y.d || x.k.localeCompare(y.k))
    .slice(0, 3)
    .map((x) => stripControl(x.k))
}

/**
 * The configured models, and each preset's, checked against the provider's catalogue when it can be reached (within
 * `catalogueTimeout`, when given); CLI agents' ids against the CLIs found on PATH (`agents`: the three, found or not,
 * with versions and logins), probed meanwhile under their own bound.
 */
export const listConfiguredModels = Effect.fn("listConfiguredModels")(function*(catalogueTimeout?: `${number} seconds`) {
  const settings = yield* Settings
  const client = yield* ModelClient
  const listed = client.listModels().pipe(Effect.mapError((e) => e.message))
  const [catalogue, agents] = yield* Effect.all([
    catalogueTimeout === undefined ? Effect.either(listed) : Effect.either(Effect.timeoutFail(listed, {
      duration: catalogueTimeout,
      onTimeout: () => `the provider's model list did not arrive within ${catalogueTimeout}`
    })),
    discoverCliAgents(settings.codexConfig)
  ], { concurrency: 2 })
  const byId = new Map(Either.isRight(catalogue) ? catalogue.right.map((m) => [m.id, m] as const) : [])
  const entry = (role: ConfiguredModel["role"], id: string): ConfiguredModel => {
    const asAgent = agentEntry(role, id, agents)
    if (asAgent !== undefined) return asAgent
    const info = byId.get(id)
    const latest = resolvedAtCall(id, settings.baseUrl)
    const notFound = Either.isRight(catalogue) && info === undefined && !latest
    return {
      role,
      id,
      found: Either.isRight(catalogue) && (info !== undefined || !latest) ? info !== undefined : undefined,
      ...(latest ? { latest: true } : {}),
      ...(info?.resolvesTo !== undefined ? { resolvesTo: stripControl(info.resolvesTo) } : {}),
      contextLength: info?.contextLength,
      promptPrice: info?.promptPrice,
      completionPrice: info?.completionPrice,
      ...(info?.variablePrice === true ? { variablePrice: true } : {}),
      ...(notFound ? { suggestions: nearestIds(id, [...byId.keys()]) } : {})
    }
  }
  const models = [
    ...settings.models.map((id) => entry("candidate", id)),
    entry("synthesizer", settings.synthesizer),
    ...settings.fallbackSynthesizers.map((id) => entry("fallback", id))
  ]
  const presets = presetPanels(settings).map(({ models, name }) => ({
    name,
    active: Option.contains(settings.preset, name),
    models: models.map((id) => entry("candidate", id))
  }))
  // A server none of whose ids is configured (a local one, with the default OpenRouter panel): say what it has.
  const offered = Either.isRight(catalogue) && models.every((m) => m.found === false && !cliAgentOf(m.id))
    ? { offered: [...byId.keys()].slice(0, OFFERED_SHOWN).map(stripControl) }
    : {}
  return { models, presets, ...offered, agents, catalogue: Either.map(catalogue, (list) => list.length) }
})
