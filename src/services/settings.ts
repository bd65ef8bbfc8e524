import { Effect, Layer } from "effect"
import { type LoadInput, loadSettings } from "../settings/load.js"
import type { SettingsValue } from "../settings/values.js"

/** The settings an entry point loads from `input` (flags, environment, config file). */
const settingsOf = (input: LoadInput) => Effect.map(loadSettings(input), (loaded) => loaded.settings)

/**
 * The effective settings of this process, read once at start-up: `const settings = yield* Settings`. The settings
 * themselves are declared in src/settings/table.ts; this is the service programs read them from.
 */
export class Settings extends Effect.Service<Settings>()("parallel-llm/Settings", {
  /** `Settings.Default(input)`: the settings from flags, environment and config file, as an entry point builds them. */
  effect: settingsOf
}) {
  /**
   * The same, from an input known only as a command runs (its parsed flags): one layer rather than
   * `Layer.unwrapEffect` of `Default`, which builds three (each layer of a graph costs its build ~150-300 Effect
   * operations, and every command line builds this one).
   */
  static readonly fromInput = <E, R>(input: Effect.Effect<LoadInput, E, R>) =>
    Layer.effect(this, Effect.map(Effect.flatMap(input, settingsOf), (settings) => this.make(settings)))

  /**
   * Settings already at hand (tests: `Settings.Test(makeTestSettings({ … }))` from test/support). For one call's
   * patched settings: `Effect.provideService(effect, Settings, Settings.make({ ...settings, ...patch }))`.
   */
  static readonly Test = (settings: SettingsValue): Layer.Layer<Settings> => Layer.succeed(this, this.make(settings))
}
