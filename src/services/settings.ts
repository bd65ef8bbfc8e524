import { Effect, Layer } from "effect"
import { type LoadInput, loadSettings } from "../settings/load.js"
import type { SettingsValue } from "../settings/values.js"

/**
 * The effective settings of this process, read once at start-up: `const settings = yield* Settings`. The settings
 * themselves are declared in src/settings/table.ts; this is the service programs read them from.
 */
export class Settings extends Effect.Service<Settings>()("parallel-llm/Settings", {
  /** `Settings.Default(input)`: the settings from flags, environment and config file, as an entry point builds them. */
  effect: (input: LoadInput) => Effect.map(loadSettings(input), (loaded) => loaded.settings)
}) {
  /**
   * Settings already at hand (tests: `Settings.Test(makeTestSettings({ … }))` from test/support). For one call's
   * patched settings: `Effect.provideService(effect, Settings, Settings.make({ ...settings, ...patch }))`.
   */
  static readonly Test = (settings: SettingsValue): Layer.Layer<Settings> => Layer.succeed(this, this.make(settings))
}
