import { Effect } from "effect"
import { RunRefused } from "../domain/errors.js"
import { OpenRouterClient } from "../services/OpenRouterClient.js"
import { Settings } from "../services/Settings.js"

/**
 * Refuses, before any paid call, a run that cannot succeed: a prompt over the size cap, or (with
 * `checkModels`) a model id the provider does not list. Model id shapes are checked when decoded.
 */
export const checkRunRequest = Effect.fn("checkRunRequest")(function*(request: {
  readonly prompt: string
  readonly models: ReadonlyArray<string>
  readonly synthesizers: ReadonlyArray<string>
}) {
  const settings = yield* Settings
  if (request.prompt.length > settings.maxPromptChars) {
    return yield* new RunRefused({
      message: `the prompt has ${request.prompt.length.toLocaleString("en-US")} characters, more than the ` +
        `${settings.maxPromptChars.toLocaleString("en-US")} allowed (--max-prompt-chars)`
    })
  }
  if (!settings.checkModels) return
  const client = yield* OpenRouterClient
  const known = yield* client.listModels().pipe(
    Effect.mapError((e) => new RunRefused({ message: `cannot check the models (--check-models): ${e.message}` }))
  )
  const ids = new Set(known.map((m) => m.id))
  const unknown = [...new Set([...request.models, ...request.synthesizers])].filter((m) => !ids.has(m))
  if (unknown.length > 0) {
    return yield* new RunRefused({
      message: `unknown model${unknown.length === 1 ? "" : "s"} at ${settings.baseUrl}: ${unknown.join(", ")} (see parallel-llm models)`
    })
  }
})
