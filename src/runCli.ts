import { Command, ValidationError } from "@effect/cli"
import type { FileSystem, Path, Terminal } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Cause, Console, Effect, FiberRef, HashSet, Layer, Logger, Ref } from "effect"
import { format } from "node:util"
import type { AppServices } from "./appLayer.js"
import { askCli } from "./cli/askCli.js"
import { BATCH_DEFAULTS, batchCli } from "./cli/batchCli.js"
import { configCli } from "./cli/configCli.js"
import { evalCli } from "./cli/evalCli.js"
import { asksForHelp, commandHelp, commandOf, docText, optionProblem, rootHelp } from "./cli/help.js"
import { modelsCli } from "./cli/modelsCli.js"
import type { Outcome } from "./cli/outcome.js"
import { resynthCli } from "./cli/resynthCli.js"
import { runsCli, showCli } from "./cli/runsCli.js"
import { openCli } from "./cli/runsOpenCli.js"
import { serveCli } from "./cli/serveCli.js"
import { type Named, namedIn, rawFromFlags, type SettingsFlags, settingsLayer, withBareValues } from "./cli/settingsOptions.js"
import { DESCRIPTION, helpTree } from "./cli/tree.js"
import { buildOnce } from "./services/buildOnce.js"
import type { CallGate } from "./services/callGate.js"
import { ProcessIo, type ProcessIoShape } from "./services/processIo.js"
import { loadDegraded } from "./settings/degraded.js"

/** Services put over a command's own (a scripted model client, another run store), built from them. */
export type ServiceOverrides = Layer.Layer<never, never, AppServices | CallGate | Platform>

/**
 * What the command line runs over: @effect/cli's needs, not all of Node's context (its worker and process
 * services, which nothing here takes from the context, cost every start-up their modules).
 */
type Platform = FileSystem.FileSystem | Path.Path | Terminal.Terminal
const platformLayer: Layer.Layer<Platform> = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeTerminal.layer)

/**
 * The platform's services, built once per process on first use and kept (they hold nothing until used: the
 * terminal opens its reader only while a prompt reads, and closes it after): providing the layer to every
 * command line instead built it again each time, about 4 ms of CPU, as much as parsing the command line.
 */
const platformServices = buildOnce(platformLayer)

export interface RunCliOptions {
  /** What `--version` prints and the help's heading shows. */
  readonly version: string
  /** Put over the services of `ask`, `batch`, `models`, `runs`, `resynth` and `eval`; none by default. */
  readonly overrides?: ServiceOverrides
}

// A command's handler and the services it runs with are imported when the command runs, not before: the
// bundle keeps them in its one file but evaluates a module only when first imported, so `--version`, `--help`
// or one command does not evaluate every other command's programs, the MCP server, the HTTP client and the
// tracing at start-up. The declarations (options and help) are all read: the command line is parsed against them.

/** The graph of appLayer.ts, once the first command that needs it asks. */
const services = <A, E, R>(of: (graph: typeof import("./appLayer.js")) => Layer.Layer<A, E, R>) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./appLayer.js")), of))

/** A handler of the module `load` imports. */
const handlerOf = <M, A, E, R>(load: () => Promise<M>, pick: (module: M) => (args: A) => Effect.Effect<Outcome, E, R>) => (args: A) =>
  Effect.flatMap(Effect.promise(load), (module) => pick(module)(args))

/**
 * `serve`'s services: it starts even when its settings cannot work (no key, a broken config file, an
 * output directory it cannot make), and says why in every call that needs what is missing. A bad flag
 * still stops it at once.
 */
const serveServices = (args: SettingsFlags) =>
  services((graph) =>
    graph.serveLayer(
      Effect.flatMap(
        Effect.all([rawFromFlags(args), ProcessIo]),
        ([raw, io]) => loadDegraded({ ...raw, env: io.env, home: io.home, cwd: io.cwd })
      )
    )
  )

/**
 * A command's services with the overrides put over them; without overrides, the graph alone (an empty layer
 * over it would still cost building two more).
 */
const withOverrides = (overrides: ServiceOverrides | undefined) => <A, E, R>(base: Layer.Layer<A | AppServices | CallGate, E, R>) =>
  overrides === undefined ? base : Layer.merge(base, Layer.provide(overrides, base))

/** Each command's services, for settings built from its own flags: the graph of appLayer.ts, provided once. */
const servicesOf = (overrides: ServiceOverrides | undefined) => {
  const overridden = withOverrides(overrides)
  return {
    overridden,
    provide:
      <LA, LE, LR>(layerOf: (flags: SettingsFlags) => Layer.Layer<LA, LE, LR>) =>
      <Name extends string, R, E, A extends { readonly settings: SettingsFlags }>(command: Command.Command<Name, R, E, A>) =>
        Command.provide(command, (args: A) => layerOf(args.settings)),
    app: (flags: SettingsFlags) => services((graph) => overridden(graph.appLayer(settingsLayer(flags)))),
    // Commands that make no paid call work without a key.
    appWithoutKey: (flags: SettingsFlags) =>
      services((graph) => overridden(graph.appLayer(settingsLayer(flags, { requireApiKey: false })))),
    batchServices: (flags: SettingsFlags) =>
      services((graph) => overridden(graph.batchLayer(settingsLayer(flags, { defaults: BATCH_DEFAULTS }))))
  }
}

/**
 * The command tree; each command's outcome goes to `exitCode`, the one place that turns it into the exit code.
 * The handlers print through `console` (`serve --http` prints its URL with it). Each command takes the settings
 * options `named` names (all without it).
 */
const commands = (exitCode: Ref.Ref<number>, console: Console.Console, overrides: ServiceOverrides | undefined, named?: Named) => {
  const record = <A, E, R>(run: (args: A) => Effect.Effect<Outcome, E, R>) => (args: A) =>
    Effect.flatMap(run(args), (outcome) => Ref.set(exitCode, outcome.exitCode)).pipe(Effect.withConsole(console))
  const { overridden, provide, app, appWithoutKey, batchServices } = servicesOf(overrides)
  const evalCommand = () => import("./cli/evalCommand.js")
  return Command.make("parallel-llm").pipe(
    Command.withDescription(DESCRIPTION),
    Command.withSubcommands([
      askCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(() => import("./cli/askCommand.js"), (m) => m.ask))),
        provide(app)
      ),
      batchCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(() => import("./cli/batchCommand.js"), (m) => m.batch))),
        provide(batchServices)
      ),
      serveCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(() => import("./cli/serveCommand.js"), (m) => m.serve))),
        provide(serveServices)
      ),
      modelsCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(() => import("./cli/modelsCommand.js"), (m) => m.models))),
        provide(appWithoutKey)
      ),
      runsCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(() => import("./cli/runsCommand.js"), (m) => m.runs))),
        provide(appWithoutKey),
        Command.withSubcommands([
          showCli.commandFor(named).pipe(
            Command.withHandler(record(handlerOf(() => import("./cli/runsCommand.js"), (m) => m.show))),
            provide(appWithoutKey)
          ),
          openCli.commandFor(named).pipe(
            Command.withHandler(record(handlerOf(() => import("./cli/runsOpenCommand.js"), (m) => m.open))),
            provide(appWithoutKey)
          )
        ])
      ),
      resynthCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(() => import("./cli/resynthCommand.js"), (m) => m.resynth))),
        provide(app)
      ),
      evalCli.commandFor(named).pipe(
        Command.withHandler(record(handlerOf(evalCommand, (m) => m.evaluate))),
        Command.provide((args) =>
          Layer.unwrapEffect(
            Effect.map(Effect.promise(evalCommand), (m) => services((graph) => overridden(graph.batchLayer(m.evalSettings(args)))))
          )
        )
      ),
      configCli.commandFor(named).pipe(Command.withHandler(record(handlerOf(() => import("./cli/configCommand.js"), (m) => m.config))))
    ])
  )
}

/** Effect's console over the command line's own streams: @effect/cli prints `--version` with it. */
const consoleOf = (io: ProcessIoShape, base: Console.Console): Console.Console => {
  const out = (...args: ReadonlyArray<unknown>) => void io.stdout.write(`${format(...args)}\n`)
  const err = (...args: ReadonlyArray<unknown>) => void io.stderr.write(`${format(...args)}\n`)
  return {
    ...base,
    log: (...args) => Effect.sync(() => out(...args)),
    info: (...args) => Effect.sync(() => out(...args)),
    error: (...args) => Effect.sync(() => err(...args)),
    warn: (...args) => Effect.sync(() => err(...args)),
    unsafe: { ...base.unsafe, log: out, info: out, error: err, warn: err }
  }
}

/**
 * @effect/cli prints its validation errors as multi-line help documents through Effect's `Console`: silenced
 * around the parsing (the handlers get `console` back), they are printed as one line instead.
 */
const withoutCliErrors = (console: Console.Console): Console.Console => ({
  ...console,
  error: () => Effect.void,
  unsafe: { ...console.unsafe, error: () => undefined }
})

/**
 * `--log-level` is @effect/cli's built-in flag, which it fails to strip in some positions; the settings
 * loader reads it from the command line itself, so the parser never needs to see it.
 */
const withoutLogLevel = (argv: ReadonlyArray<string>): Array<string> =>
  argv.filter((arg, i) => arg !== "--log-level" && argv[i - 1] !== "--log-level" && !arg.startsWith("--log-level="))

/**
 * Each `--name=value` before a `--` as two words: @effect/cli splits such a word only where it looks for a single
 * option's value, so a repeatable one given so (`--attach=a.txt`, `--model=a/b`) was refused as an unknown argument.
 */
const withValuesApart = (words: ReadonlyArray<string>): Array<string> => {
  const end = words.includes("--") ? words.indexOf("--") : words.length
  return words.flatMap((word, i) => {
    const joined = i < end ? /^(--[^=\s]+)=([^]*)$/.exec(word) : null
    return joined === null ? [word] : [joined[1]!, joined[2]!]
  })
}

/**
 * Runs the command line of `ProcessIo` (the process's own unless another is provided) to its exit code:
 * usage errors are 2, other failures 1, each said on one line of its stderr.
 */
export const runCli = (options: RunCliOptions): Effect.Effect<number> =>
  Effect.gen(function*() {
    const io = yield* ProcessIo
    const console = consoleOf(io, yield* Effect.console)
    const fail = (code: number, message: string) =>
      Effect.sync(() => {
        io.stderr.write(`parallel-llm: ${message}\n`)
        return code
      })
    const words = withBareValues(withoutLogLevel(io.argv))
    const target = commandOf(helpTree, words)
    const helpPath = `parallel-llm${target.help === undefined ? "" : ` ${target.help.path}`} --help`
    const columns = io.stdout.columns ?? (Number(io.env.COLUMNS) || undefined)
    // `--help` is rendered here from the declarations; an option the command does not take is refused before parsing.
    if (words.length === 0 || asksForHelp(words)) {
      io.stdout.write(
        target.help === undefined
          ? rootHelp(helpTree, { version: options.version, description: DESCRIPTION }, columns)
          : commandHelp(target.help, columns)
      )
      return 0
    }
    const problem = optionProblem(target.help, target.rest)
    if (problem !== undefined) return yield* fail(2, problem)
    const exitCode = yield* Ref.make(0)
    // The settings options the command line names (settingsOptions.ts says why); all of them for a shell's completions.
    const completing = words.some((word) => word === "--completions" || word.startsWith("--completions=") || word === "--wizard")
    const tree = commands(exitCode, console, options.overrides, completing ? undefined : namedIn(words))
    return yield* Command.run(tree, { name: "parallel-llm", version: options.version })(["node", "parallel-llm", ...withValuesApart(words)])
      .pipe(
        Effect.withConsole(withoutCliErrors(console)),
        Effect.zipRight(Ref.get(exitCode)),
        Effect.catchTags({
          SettingsError: (e) => fail(2, e.message),
          UsageError: (e) => fail(2, e.message),
          RunRefused: (e) => fail(2, e.message),
          StoreError: (e) => fail(1, e.message)
        }),
        // What was wrong with the command line, on one line.
        Effect.catchIf(
          ValidationError.isValidationError,
          (e) => fail(2, `${"error" in e ? docText(e.error).trim().replace(/\s+/g, " ") : "invalid command line"} (see ${helpPath})`)
        ),
        Effect.catchAllDefect((defect) => fail(1, `internal error: ${Cause.pretty(Cause.die(defect))}`))
      )
  }).pipe(
    Effect.locallyWith(FiberRef.currentLoggers, HashSet.remove(Logger.defaultLogger)),
    (program) => Effect.flatMap(platformServices, (platform) => Effect.provide(program, platform))
  )
