#!/usr/bin/env node
import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit, Layer, Logger, Ref } from "effect"
import * as fs from "node:fs"
import { appLayer, batchLayer } from "./AppLayer.js"
import { ask, askCommand } from "./cli/askCommand.js"
import { batch, batchCommand } from "./cli/batchCommand.js"
import { BATCH_DEFAULTS } from "./cli/batchProgress.js"
import { config, configCommand } from "./cli/configCommand.js"
import { evalCommand, evalSettings, evaluate } from "./cli/evalCommand.js"
import { asksForHelp, commandHelp, commandOf, docText, optionProblem, rootHelp } from "./cli/help.js"
import { models, modelsCommand } from "./cli/modelsCommand.js"
import type { Outcome } from "./cli/outcome.js"
import { resynth, resynthCommand } from "./cli/resynthCommand.js"
import { runs, runsCommand, show, showCommand } from "./cli/runsCommand.js"
import { open, openCommand } from "./cli/runsOpenCommand.js"
import { serve, serveCommand, serveServices } from "./cli/serveCommand.js"
import { type SettingsFlags, settingsLayer } from "./cli/settingsOptions.js"
import { DESCRIPTION, helpTree } from "./cli/tree.js"

const version = (): string => {
  const pkg: unknown = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  return typeof pkg === "object" && pkg !== null && "version" in pkg && typeof pkg.version === "string" ? pkg.version : "0.0.0"
}

// Each command's services, for settings built from its own flags: the graph of AppLayer.ts, provided once.
const app = (args: SettingsFlags) => appLayer(settingsLayer(args))
// Commands that make no paid call work without a key.
const appWithoutKey = (args: SettingsFlags) => appLayer(settingsLayer(args, { requireApiKey: false }))

/**
 * The command tree; each command's outcome goes to `exitCode`, the one place that turns it into the process's.
 * The handlers print through `console`, the process's own (`serve --http` prints its URL with it).
 */
const commands = (exitCode: Ref.Ref<number>, console: Console.Console) => {
  const record = <A, E, R>(run: (args: A) => Effect.Effect<Outcome, E, R>) => (args: A) =>
    Effect.flatMap(run(args), (outcome) => Ref.set(exitCode, outcome.exitCode)).pipe(Effect.withConsole(console))
  const provide =
    <LA, LE, LR>(layerOf: (flags: SettingsFlags) => Layer.Layer<LA, LE, LR>) =>
    <Name extends string, R, E, A extends { readonly settings: SettingsFlags }>(command: Command.Command<Name, R, E, A>) =>
      Command.provide(command, (args: A) => layerOf(args.settings))
  return Command.make("parallel-llm").pipe(
    Command.withDescription(DESCRIPTION),
    Command.withSubcommands([
      askCommand.pipe(Command.withHandler(record(ask)), provide(app)),
      batchCommand.pipe(
        Command.withHandler(record(batch)),
        provide((flags) => batchLayer(settingsLayer(flags, { defaults: BATCH_DEFAULTS })))
      ),
      serveCommand.pipe(Command.withHandler(record(serve)), provide(serveServices)),
      modelsCommand.pipe(Command.withHandler(record(models)), provide(appWithoutKey)),
      runsCommand.pipe(
        Command.withHandler(record(runs)),
        provide(appWithoutKey),
        Command.withSubcommands([
          showCommand.pipe(Command.withHandler(record(show)), provide(appWithoutKey)),
          openCommand.pipe(Command.withHandler(record(open)), provide(appWithoutKey))
        ])
      ),
      resynthCommand.pipe(Command.withHandler(record(resynth)), provide(app)),
      evalCommand.pipe(Command.withHandler(record(evaluate)), Command.provide((args) => batchLayer(evalSettings(args)))),
      configCommand.pipe(Command.withHandler(record(config)))
    ])
  )
}

const fail = (code: number, message: string) =>
  Effect.sync(() => {
    process.stderr.write(`parallel-llm: ${message}\n`)
    return code
  })

/**
 * `--log-level` is @effect/cli's built-in flag, which it fails to strip in some positions; the settings
 * loader reads it from `process.argv` itself, so the parser never needs to see it.
 */
const withoutLogLevel = (argv: ReadonlyArray<string>): Array<string> =>
  argv.filter((arg, i) => arg !== "--log-level" && argv[i - 1] !== "--log-level" && !arg.startsWith("--log-level="))

/**
 * @effect/cli prints its validation errors as multi-line help documents through Effect's `Console`: silenced
 * around the parsing (the handlers get `console` back), they are printed as one line below instead.
 */
const withoutCliErrors = (console: Console.Console): Console.Console => ({
  ...console,
  error: () => Effect.void,
  unsafe: { ...console.unsafe, error: () => undefined }
})

const words = withoutLogLevel(process.argv).slice(2)
const target = commandOf(helpTree, words)
const helpPath = `parallel-llm${target.help === undefined ? "" : ` ${target.help.path}`} --help`

/** `--help` is rendered here from the declarations; an option the command does not take is refused before parsing. */
const beforeParsing: Effect.Effect<number | undefined> = Effect.suspend(() => {
  if (words.length === 0 || asksForHelp(words)) {
    const text = target.help === undefined
      ? rootHelp(helpTree, { version: version(), description: DESCRIPTION })
      : commandHelp(target.help)
    return Effect.as(Effect.sync(() => process.stdout.write(text)), 0)
  }
  const problem = optionProblem(target.help, target.rest)
  return problem === undefined ? Effect.succeed(undefined) : fail(2, problem)
})

const program = Effect.gen(function*() {
  const early = yield* beforeParsing
  if (early !== undefined) return early
  const exitCode = yield* Ref.make(0)
  const console = yield* Effect.console
  yield* Command.run(commands(exitCode, console), { name: "parallel-llm", version: version() })(withoutLogLevel(process.argv)).pipe(
    Effect.withConsole(withoutCliErrors(console))
  )
  return yield* Ref.get(exitCode)
}).pipe(
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
  Effect.catchAllDefect((defect) => fail(1, `internal error: ${Cause.pretty(Cause.die(defect))}`)),
  Effect.provide(Layer.merge(NodeContext.layer, Logger.remove(Logger.defaultLogger)))
)

// A reader that stops early (`ask … | head`) closes the pipe: what is left has nowhere to go, and that is
// no error of ours. Anything else on these streams is.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
  })
}

// A closed terminal or a hung-up session (SIGHUP) ends the work like Ctrl-C or SIGTERM: the runs are
// interrupted and write their manifests, instead of the process dying where it stands.
process.on("SIGHUP", () => process.emit("SIGTERM", "SIGTERM"))

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    if (Exit.isSuccess(exit)) onExit(typeof exit.value === "number" ? exit.value : 0)
    else if (Cause.isInterruptedOnly(exit.cause)) onExit(130)
    else {
      process.stderr.write(`parallel-llm: ${Cause.pretty(exit.cause)}\n`)
      onExit(1)
    }
  }
})
