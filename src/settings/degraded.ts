import { FileSystem } from "@effect/platform"
import { Context, Effect, Either, Option } from "effect"
import { plainFsReason, type SettingsError } from "../domain/errors.js"
import { makeDirectories } from "../domain/makeDirectories.js"
import { whereSet } from "./layers.js"
import { type LoadedSettings, type LoadInput, loadSettings } from "./load.js"
import { settingsTable } from "./table.js"

// `serve` starts even when it cannot work, so that its client can be told why: the settings are loaded
// with the problem kept as a value, and each tool refuses the calls that need what is missing.

/** What a tool may need that a server can start without. */
export type Need = "settings" | "key" | "outputDir"

/** Something the server started without: which need it leaves unmet, and one line naming it and its fix. */
export interface StartupProblem {
  readonly blocks: Need
  readonly message: string
}

/** The problems this process started with; none unless `serve` found some (see `loadDegraded`). */
export class StartupProblems extends Context.Reference<StartupProblems>()("parallel-llm/StartupProblems", {
  defaultValue: (): ReadonlyArray<StartupProblem> => []
}) {}

const RESTART = "then restart the server"

/** A loader's message (which names the variable, flag or file and line) with what to do about it. */
const withFix = (message: string): string =>
  message.trimEnd().endsWith(".") ? `${message.trimEnd()} Then restart the server.` : `${message}; fix it, ${RESTART}.`

/** The settings as they stand, with what is wrong with them; healthy settings have no problems. */
export interface DegradedSettings {
  readonly loaded: LoadedSettings
  readonly problems: ReadonlyArray<StartupProblem>
}

/**
 * The output directory, made now (private, as the run store makes it) so that a server that could not
 * write a run says so before the first call; a problem naming the setting to change when it cannot.
 */
const outputDirProblem = (loaded: LoadedSettings) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => {
    const dir = loaded.settings.outputDir
    const source = loaded.sources.outputDir
    const where = source === "default"
      ? `${settingsTable.outputDir.env} (or --${settingsTable.outputDir.flag})`
      : whereSet("outputDir", source, {
        configFile: Option.getOrUndefined(loaded.settings.configFile),
        presetName: Option.getOrUndefined(loaded.settings.preset)
      })
    return makeDirectories(fs, dir, 0o700).pipe(
      Effect.as(Option.none<StartupProblem>()),
      Effect.catchAll((error) =>
        Effect.succeed(Option.some<StartupProblem>({
          blocks: "outputDir",
          message: `the output directory ${dir} cannot be created (${plainFsReason(error)}): ` +
            `set ${where} to a directory this server may write, ${RESTART}.`
        }))
      )
    )
  })

/**
 * The settings as `serve` needs them: what loads, and what did not as a problem. A failed load is tried
 * again without the key (the key was the problem: tools that call a model are refused), then without
 * the config file, then from the flags alone (the settings were the problem: every tool but get_config
 * is refused). When even the flags alone fail, a command-line flag is wrong: that still fails here.
 */
export const loadDegraded = Effect.fn("Settings.loadDegraded")(function*(input: LoadInput) {
  const first = yield* Effect.either(loadSettings(input))
  if (Either.isRight(first)) {
    const problems = Option.toArray(yield* outputDirProblem(first.right))
    return { loaded: first.right, problems } satisfies DegradedSettings
  }
  const keyless: LoadInput = { ...input, env: { ...input.env, OPENROUTER_API_KEY: undefined }, requireApiKey: false }
  const message = withFix(first.left.message)
  const fallbacks: ReadonlyArray<readonly [LoadInput, StartupProblem]> = [
    [keyless, { blocks: "key", message }],
    [{ ...keyless, withoutConfigFile: true }, { blocks: "settings", message }],
    [{ ...keyless, env: {}, withoutConfigFile: true }, { blocks: "settings", message }]
  ]
  let last: SettingsError = first.left
  for (const [fallback, problem] of fallbacks) {
    const loaded = yield* Effect.either(loadSettings(fallback))
    if (Either.isRight(loaded)) {
      // Fallback settings name no directory worth making: only settings without the key are checked further.
      const more = problem.blocks === "key" ? Option.toArray(yield* outputDirProblem(loaded.right)) : []
      const problems = [problem, ...more]
      return { loaded: loaded.right, problems } satisfies DegradedSettings
    }
    last = loaded.left
  }
  return yield* last
}) satisfies (input: LoadInput) => Effect.Effect<DegradedSettings, SettingsError, FileSystem.FileSystem>
