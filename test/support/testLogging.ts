import { Layer, Option } from "effect"
import { type LogEntry, Logging } from "../../src/services/logging.js"
import type { LogLevelName } from "../../src/settings/kinds.js"

/** The Logging service's test layer: every line into `entries`, nothing to stderr or a file. */
export const layerTestLogging = (entries: Array<LogEntry>, logLevel: LogLevelName = "debug"): Layer.Layer<Logging> =>
  Logging.Test({ logLevel, logFile: Option.none() }, [(entry) => entries.push(entry)], () => undefined).pipe(Layer.orDie)
