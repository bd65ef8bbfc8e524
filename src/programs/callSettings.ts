import { Effect, Either } from "effect"
import { RunRefused } from "../domain/errors.js"
import { Settings } from "../services/settings.js"
import { patchSettings, type PerCallValues } from "../settings/perCall.js"
import { strategyNamed } from "./strategies/registry.js"

/**
 * Runs `run` with one call's own settings (an MCP tool's arguments, a `batch` line's): its preset, then its
 * values, over the server's `Settings`, provided as `Settings` for this call alone. A bad value or an unknown
 * preset refuses the call before anything is paid for.
 */
export const withCallSettings =
  (values: PerCallValues) => <A, E, R>(run: Effect.Effect<A, E, R>): Effect.Effect<A, E | RunRefused, R | Settings> =>
    // No value of its own (a `batch` line without models, an MCP call without overrides): the call runs on the
    // Settings in force as they are, rather than on a copy decoded and provided again (an `Effect.locally`).
    Object.values(values).every((value) => value === undefined) ?
      run :
      Effect.flatMap(Settings, (settings) =>
        Either.match(patchSettings(settings, values), {
          onLeft: (message): Effect.Effect<A, E | RunRefused, R> => Effect.fail(new RunRefused({ message })),
          onRight: (patched) => {
            // `self` asks the first of the models a call names: the others are said not to be asked, not dropped silently.
            const unsampled = strategyNamed(patched.strategy)?.warning(values.models)
            const warned = unsampled === undefined ? run : Effect.zipRight(Effect.logWarning(unsampled), run)
            return Effect.provideService(warned, Settings, Settings.make(patched))
          }
        }))
