import { Cause, Effect, FiberRef, HashMap, HashSet, Inspectable, Layer, List, Logger, LogLevel, Option, type Scope } from "effect"
import * as fs from "node:fs"
import { plainFsReason, SettingsError } from "../domain/errors.js"
import { stripControl } from "../domain/text.js"
import type { LogLevelName } from "../settings/kinds.js"
import type { SettingsValue } from "../settings/values.js"
import { ProcessIo } from "./processIo.js"
import { Settings } from "./settings.js"

export interface LogEntry {
  readonly level: LogLevelName
  readonly date: Date
  /** The message (and the cause, if any), without time or level. */
  readonly text: string
  /** Annotations and spans (the run id), as `key=value` words. */
  readonly context: ReadonlyArray<string>
}

/** Writes a formatted line to stderr (or somewhere that draws on it, like the live progress display). */
export type StderrWriter = (line: string, entry: LogEntry) => void

/** Somewhere log lines go besides stderr and the log file (the MCP client, a progress display). */
export type LogSink = (entry: LogEntry) => void

export const toLevelName = (level: LogLevel.LogLevel): LogLevelName =>
  level._tag === "Debug" || level._tag === "Trace" || level._tag === "All"
    ? "debug"
    : level._tag === "Info"
    ? "info"
    : level._tag === "Warning"
    ? "warning"
    : "error"

export const fromLevelName = (name: LogLevelName): LogLevel.LogLevel =>
  name === "debug" ? LogLevel.Debug : name === "info" ? LogLevel.Info : name === "warning" ? LogLevel.Warning : LogLevel.Error

/**
 * Whether lines at `level` are logged at all in this fiber (and the fibers it starts): a hot path asks once and
 * then neither builds nor sends lines that the minimum level would drop.
 */
export const logsAt = (level: LogLevel.LogLevel): Effect.Effect<boolean> =>
  Effect.map(FiberRef.get(FiberRef.currentMinimumLogLevel), (minimum) => LogLevel.greaterThanEqual(level, minimum))

const messageText = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : Inspectable.toStringUnknown(part))).join(" ")
}

const entryOf = (options: Logger.Logger.Options<unknown>): LogEntry => {
  const annotations = HashMap.toEntries(options.annotations)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : Inspectable.toStringUnknown(value)}`)
  const spans = List.toArray(options.spans).map((span) => span.label)
  const cause = Cause.isEmpty(options.cause) ? "" : `\n${Cause.pretty(options.cause)}`
  return {
    level: toLevelName(options.logLevel),
    date: options.date,
    // Every log line may carry a provider's or a user's text: no control characters reach a terminal or a file.
    text: stripControl(`${messageText(options.message)}${cause}`),
    context: [...annotations, ...spans].map(stripControl)
  }
}

const LABEL: Record<LogLevelName, string> = { debug: "DEBUG", info: "INFO ", warning: "WARN ", error: "ERROR" }

/** A log file line: full timestamp and context, for reading after the fact. */
export const formatFileLine = (entry: LogEntry): string =>
  `${entry.date.toISOString()} ${LABEL[entry.level]} ${entry.text}${entry.context.length > 0 ? ` [${entry.context.join(" ")}]` : ""}`

/** A terminal line: short local time, no context (the run id is named when the run starts). */
export const formatStderrLine = (entry: LogEntry): string => `${entry.date.toTimeString().slice(0, 8)} ${LABEL[entry.level]} ${entry.text}`

/** What the logging service does; `Logging` is this, as a service. */
interface LoggingShape {
  /** Sends every log line to `sink` too, until the scope closes (the MCP server adds its client this way). */
  readonly addSink: (sink: LogSink) => Effect.Effect<void, never, Scope.Scope>
  /** Writes the stderr lines with `writer` instead, until the scope closes (a live progress display draws them). */
  readonly useStderr: (writer: StderrWriter) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * Appends to the log file, best effort: logging must never stop the work. The first line that cannot be
 * written (a full disk, `/dev/full`) is reported once on stderr; later lines are still tried, silently.
 */
const bestEffortFile = (fd: number, file: string, warn: (text: string) => void) => {
  let warned = false
  return (line: string): void => {
    try {
      fs.writeSync(fd, line)
    } catch (error) {
      if (warned) return
      warned = true
      warn(`cannot write the log file ${file} (${plainFsReason(error)}); going on without it`)
    }
  }
}

/**
 * Effect's logger, replaced for the scope: lines go to stderr (stdout belongs to the answer, or to JSON-RPC under
 * `serve`), to the log file when one is set, and to any extra sinks. Built when the program starts,
 * never at import time.
 */
const installLogging = Effect.fnUntraced(function*(
  settings: Pick<SettingsValue, "logLevel" | "logFile">,
  extraSinks: ReadonlyArray<LogSink> = [],
  stderr: StderrWriter = (line) => process.stderr.write(line)
) {
  const fd = yield* Option.match(settings.logFile, {
    onNone: () => Effect.succeed(undefined),
    onSome: (file) =>
      Effect.acquireRelease(
        Effect.try({
          try: () => fs.openSync(file, "a"),
          catch: (e) => new SettingsError({ setting: "--log-file", message: `--log-file: cannot open ${file}: ${plainFsReason(e)}` })
        }),
        (fd) => Effect.sync(() => fs.closeSync(fd))
      )
  })
  const sinks = new Set<LogSink>(extraSinks)
  let writeStderr = stderr
  const service: LoggingShape = {
    addSink: (sink) =>
      Effect.acquireRelease(Effect.sync(() => sinks.add(sink)), () => Effect.sync(() => sinks.delete(sink))).pipe(Effect.asVoid),
    useStderr: (writer) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const previous = writeStderr
          writeStderr = writer
          return previous
        }),
        (previous) =>
          Effect.sync(() => {
            writeStderr = previous
          })
      ).pipe(Effect.asVoid)
  }
  // Said where log lines go (the display, if one draws them), but never into the file that cannot be written.
  const warn = (text: string) => writeStderr(`parallel-llm: warning: ${text}\n`, { level: "warning", date: new Date(), text, context: [] })
  const toFile = fd === undefined ? undefined : bestEffortFile(fd, Option.getOrElse(settings.logFile, () => ""), warn)
  const logger = Logger.make((options) => {
    const entry = entryOf(options)
    writeStderr(`${formatStderrLine(entry)}\n`, entry)
    toFile?.(`${formatFileLine(entry)}\n`)
    for (const sink of sinks) sink(entry)
  })
  yield* Effect.locallyScopedWith(
    FiberRef.currentLoggers,
    // Effect's tracer logger also records every line as an event of the current span, and a span such as
    // `serveMcp` or `runBatch` lives as long as the process's work: its events would grow with every run.
    // Nothing here exports spans, so nobody reads those events.
    (loggers) => HashSet.add(HashSet.remove(HashSet.remove(loggers, Logger.defaultLogger), Logger.tracerLogger), logger)
  )
  yield* Effect.locallyScoped(FiberRef.currentMinimumLogLevel, fromLevelName(settings.logLevel))
  // Stream internals run in forked fibers: a failure there (a response over the size cap, say)
  // reaches us as a typed error already, and a second "unhandled error" line would only mislead.
  yield* Effect.locallyScoped(FiberRef.unhandledErrorLogLevel, Option.none())
  return service
})

/** Where log lines go; the logger itself is installed by the same layer, at the level and with the log file the settings name. */
export class Logging extends Effect.Service<Logging>()("parallel-llm/Logging", {
  // The stderr lines go to the command line's own stderr (a test runs a command line in-process).
  scoped: Effect.flatMap(
    Effect.all([Settings, ProcessIo]),
    ([settings, io]) => installLogging(settings, [], (line) => io.stderr.write(line))
  )
}) {
  /** Logging at a level and log file given, to extra sinks, its stderr lines to `stderr` (tests, the bench). */
  static readonly Test = (
    settings: Pick<SettingsValue, "logLevel" | "logFile">,
    extraSinks: ReadonlyArray<LogSink> = [],
    stderr?: StderrWriter
  ): Layer.Layer<Logging, SettingsError> =>
    Layer.scoped(this, Effect.map(installLogging(settings, extraSinks, stderr), (service) => this.make(service)))
}
