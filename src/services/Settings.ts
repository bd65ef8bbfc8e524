import type { FileSystem } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import type { SettingsError } from "../domain/errors.js"
import { type LoadInput, loadSettings } from "../settings/load.js"
import type { SettingsValue } from "../settings/values.js"

// The settings themselves are declared in src/settings/table.ts; this is the service programs read them from.
export { describeSettings } from "../settings/describe.js"
export { type LogLevelName } from "../settings/kinds.js"
export { type LoadedSettings, type LoadInput, loadSettings, MAX_CONFIG_FILE_BYTES } from "../settings/load.js"
export { defaultConfigFile, defaultOutputDir, isLoopbackUrl } from "../settings/paths.js"
export {
  DEFAULT_BASE_URL,
  DEFAULT_FALLBACK_SYNTHESIZERS,
  DEFAULT_MODELS,
  DEFAULT_SYNTHESIZER,
  type SettingKey,
  settingsTable
} from "../settings/table.js"
export type { RawSettings, SettingSource, SettingsValue } from "../settings/values.js"

/** The effective settings of this process, read once at start-up: `const settings = yield* Settings`. */
export class Settings extends Context.Tag("parallel-llm/Settings")<Settings, SettingsValue>() {
  /** Settings already at hand (tests: `Settings.layer(makeTestSettings({ … }))` from test/support). */
  static readonly layer = (settings: SettingsValue): Layer.Layer<Settings> => Layer.succeed(Settings, settings)

  /** The settings from flags, environment and config file, as an entry point builds them. */
  static readonly load = (input: LoadInput): Layer.Layer<Settings, SettingsError, FileSystem.FileSystem> =>
    Layer.effect(Settings, Effect.map(loadSettings(input), (loaded) => loaded.settings))
}

/** The same as `Settings.layer`. */
export const layerSettings = Settings.layer
