import { Effect, Either } from "effect"
import { OpenRouterClient } from "../services/OpenRouterClient.js"
import { Settings } from "../services/Settings.js"

export interface ConfiguredModel {
  readonly role: "candidate" | "synthesizer" | "fallback"
  readonly id: string
  /** Whether the provider lists it; undefined when the list could not be fetched. */
  readonly found: boolean | undefined
  readonly contextLength?: number | undefined
  /** USD per million tokens. */
  readonly promptPrice?: number | undefined
  readonly completionPrice?: number | undefined
}

/** The configured models, each checked against the provider's catalogue when it can be reached. */
export const listConfiguredModels = Effect.fn("listConfiguredModels")(function*() {
  const settings = yield* Settings
  const client = yield* OpenRouterClient
  const catalogue = yield* client.listModels().pipe(
    Effect.mapError((e) => e.message),
    Effect.either
  )
  const byId = new Map(Either.isRight(catalogue) ? catalogue.right.map((m) => [m.id, m] as const) : [])
  const entry = (role: ConfiguredModel["role"], id: string): ConfiguredModel => {
    const info = byId.get(id)
    return {
      role,
      id,
      found: Either.isRight(catalogue) ? info !== undefined : undefined,
      contextLength: info?.contextLength,
      promptPrice: info?.promptPrice,
      completionPrice: info?.completionPrice
    }
  }
  const models = [
    ...settings.models.map((id) => entry("candidate", id)),
    entry("synthesizer", settings.synthesizer),
    ...settings.fallbackSynthesizers.map((id) => entry("fallback", id))
  ]
  return { models, catalogue: Either.map(catalogue, (list) => list.length) }
})
