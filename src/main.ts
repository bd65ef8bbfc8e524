#!/usr/bin/env node
import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Logger } from "effect"
import * as fs from "node:fs"
import { makeAskCommand } from "./cli/askCommand.js"
import { makeBatchCommand } from "./cli/batchCommand.js"
import { makeConfigCommand } from "./cli/configCommand.js"
import { makeEvalCommand } from "./cli/evalCommand.js"
import { makeResynthCommand } from "./cli/resynthCommand.js"
import { makeRunsCommand } from "./cli/runsCommand.js"
import { makeModelsCommand } from "./cli/modelsCommand.js"
import { makeServeCommand } from "./cli/serveCommand.js"
import type { ServicesFor } from "./cli/services.js"
import { layerLogging } from "./services/Logging.js"
import { layerPooledHttpClient } from "./services/HttpClientPool.js"
import { layerOpenRouterClient } from "./services/OpenRouterClient.js"
import { layerRunStore } from "./services/RunStore.js"
import { layerSettings } from "./services/Settings.js"

/** Every service the programs use, for settings read from the command line. */
const servicesFor: ServicesFor = (settings, extraLogSinks = [], stderr) =>
  Layer.mergeAll(layerOpenRouterClient, layerRunStore).pipe(
    Layer.provideMerge(layerSettings(settings)),
    Layer.provide(Layer.mergeAll(layerPooledHttpClient, NodeFileSystem.layer, NodePath.layer)),
    Layer.merge(layerLogging(settings, extraLogSinks, stderr))
  )

const version = (): string => {
  const pkg: unknown = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  return typeof pkg === "object" && pkg !== null && "version" in pkg && typeof pkg.version === "string" ? pkg.version : "0.0.0"
}

const root = Command.make("parallel-llm").pipe(
  Command.withDescription(
    "Ask several LLMs the same question at once through OpenRouter, keep every answer, and have a synthesizer merge them."
  ),
  Command.withSubcommands([
    makeAskCommand(servicesFor),
    makeBatchCommand(servicesFor),
    makeServeCommand(servicesFor),
    makeModelsCommand(servicesFor),
    makeRunsCommand(servicesFor),
    makeResynthCommand(servicesFor),
    makeEvalCommand(servicesFor),
    makeConfigCommand()
  ])
)

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

const program = Effect.suspend(() =>
  Command.run(root, { name: "parallel-llm", version: version() })(withoutLogLevel(process.argv))
).pipe(
  Effect.map(() => Number(process.exitCode ?? 0)),
  Effect.catchTags({
    SettingsError: (e) => fail(2, e.message),
    UsageError: (e) => fail(2, e.message),
    RunRefused: (e) => fail(2, e.message),
    StoreError: (e) => fail(1, e.message)
  }),
  // @effect/cli has already printed what was wrong with the command line.
  Effect.catchIf(ValidationError.isValidationError, () => Effect.succeed(2)),
  Effect.catchAllDefect((defect) => fail(1, `internal error: ${Cause.pretty(Cause.die(defect))}`)),
  Effect.provide(Layer.merge(NodeContext.layer, Logger.remove(Logger.defaultLogger)))
)

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
