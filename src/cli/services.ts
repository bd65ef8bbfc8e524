import type { Layer } from "effect"
import type { SettingsError } from "../domain/errors.js"
import type { LogSink, StderrWriter } from "../services/Logging.js"
import type { OpenRouterClient } from "../services/OpenRouterClient.js"
import type { RunStore } from "../services/RunStore.js"
import type { Settings, SettingsValue } from "../services/Settings.js"

/** What the programs need at run time. */
export type AppServices = Settings | OpenRouterClient | RunStore

/**
 * Builds the services for settings that are only known once the command line is parsed.
 * The implementation lives in `main.ts`, where all composition happens.
 */
export type ServicesFor = (
  settings: SettingsValue,
  extraLogSinks?: ReadonlyArray<LogSink>,
  stderr?: StderrWriter
) => Layer.Layer<AppServices, SettingsError>
