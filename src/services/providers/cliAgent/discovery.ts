import { Command, type CommandExecutor, FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, Layer, Option, Schema, Stream } from "effect"
import { CLI_AGENTS, type CliAgentName } from "../../../domain/cliAgent.js"
import { stripControl } from "../../../domain/text.js"
import type { AgentCli } from "./agentCli.js"
import { executableOnPath } from "./executableOnPath.js"
import { agentClis, inheritedEnv, nodeExecutor } from "./provider.js"

// What `models`, `--check-models` and `list_models` say of the CLI agents without a model call: which CLIs are on
// PATH, their versions, and whether each is logged in where the CLI can say so (`claude auth status`,
// `codex login status`; for Gemini CLI, a key in the environment or the files of a Google sign-in). A CLI not on
// PATH is known missing without being started.

export const CliAgentStatus = Schema.Struct({
  cli: Schema.Literal(...CLI_AGENTS),
  executable: Schema.String,
  /** On PATH and answering `--version`. */
  found: Schema.Boolean,
  version: Schema.optional(Schema.String),
  /** Absent: the CLI cannot say without a model call. */
  loggedIn: Schema.optional(Schema.Boolean),
  /** What to run to log in. */
  login: Schema.String
})
export type CliAgentStatus = typeof CliAgentStatus.Type

/** A CLI under load (Gemini CLI loads a large bundle) may take this long to say its version. */
const PROBE_TIMEOUT = "45 seconds"
/** What a probe reads of a CLI's output at most. */
const PROBE_CAP = 64 * 1024

const textOf = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  stream.pipe(Stream.decodeText(), Stream.runFold("", (kept, text) => (kept + text).slice(0, PROBE_CAP)), Effect.orElseSucceed(() => ""))

/** Runs the CLI with `args` in the user's environment: its exit code and what it printed; none if it could not run. */
const probe = (cli: AgentCli, args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  Effect.scoped(Effect.gen(function*() {
    const proc = yield* Command.start(Command.make(cli.executable, ...args).pipe(Command.env(env, { extendEnv: false }), Command.feed("")))
    const [stdout, stderr, code] = yield* Effect.all([textOf(proc.stdout), textOf(proc.stderr), proc.exitCode], { concurrency: 3 })
    return { code: Number(code), output: `${stdout}\n${stderr}` }
  })).pipe(Effect.timeout(PROBE_TIMEOUT), Effect.option)

/** Gemini CLI has no login status command: a key in the environment, or the files a Google sign-in leaves. */
const geminiLoggedIn = (env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    if (env["GEMINI_API_KEY"] || env["GOOGLE_API_KEY"] || env["GOOGLE_GENAI_USE_VERTEXAI"] === "true") return true
    const fs = yield* FileSystem.FileSystem
    return yield* fs.exists(`${env["HOME"] ?? ""}/.gemini/oauth_creds.json`).pipe(Effect.orElseSucceed(() => false))
  })

const statusOf = (cli: AgentCli, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const base = { cli: cli.name, executable: cli.executable, login: cli.login }
    const notFound = { ...base, found: false } satisfies CliAgentStatus
    // The probe runs in this process's directory: a relative PATH entry is relative to it.
    if (Option.isNone(yield* executableOnPath(cli.executable, env, process.cwd()))) return notFound
    const version = yield* probe(cli, ["--version"], env)
    if (Option.isNone(version) || version.value.code !== 0) return notFound
    const number = /\d+\.\d+[.\w-]*/.exec(version.value.output)?.[0]
    const check = cli.loginCheck
    const loggedIn = check !== undefined
      ? Option.getOrUndefined(Option.map(yield* probe(cli, check.args, env), (r) => check.loggedIn(r.code, r.output)))
      : cli.name === "gemini-cli"
      ? yield* geminiLoggedIn(env)
      : undefined
    return {
      ...base,
      found: true,
      ...(number !== undefined ? { version: stripControl(number) } : {}),
      ...(loggedIn !== undefined ? { loggedIn } : {})
    } satisfies CliAgentStatus
  })

/**
 * The CLI agents as this environment has them, probed side by side: all three (a listing), or `only` those (a check
 * of the ones a run names: each probe of a CLI on PATH starts it, a Node program, once or twice), each started with
 * the executor `executorLayer` builds.
 */
export const discoverCliAgentsIn = (environment: () => NodeJS.ProcessEnv, options: DiscoveryOptions = {}) =>
  Effect.suspend(() => {
    const env = inheritedEnv(environment())
    const { only } = options
    const clis = Object.values(agentClis(options.codexConfig ?? [])).filter((cli) => only === undefined || only.includes(cli.name))
    return Effect.forEach(clis, (cli) => statusOf(cli, env), { concurrency: "unbounded" })
  }).pipe(Effect.provide(Layer.merge(options.executorLayer ?? nodeExecutor, NodeFileSystem.layer)))

export interface DiscoveryOptions {
  /** The user's `-c` overrides for Codex (`--codex-config`); none by default. */
  readonly codexConfig?: ReadonlyArray<string> | undefined
  /** The CLIs to probe; all three by default. */
  readonly only?: ReadonlyArray<CliAgentName> | undefined
  /** What starts the CLIs: Node's own executor by default (a test counts the processes it starts). */
  readonly executorLayer?: Layer.Layer<CommandExecutor.CommandExecutor> | undefined
}

/** The CLI agents of this process's environment, Codex with the user's `-c` overrides (`codexConfig`). */
export const discoverCliAgents = (codexConfig: ReadonlyArray<string>, only?: ReadonlyArray<CliAgentName>) =>
  discoverCliAgentsIn(() => process.env, { codexConfig, only })

/** Why a configured CLI agent cannot answer here (not on PATH, not logged in), or nothing. */
export const agentProblem = (status: CliAgentStatus): string | undefined =>
  !status.found
    ? `${status.executable} is not on PATH`
    : status.loggedIn === false
    ? `${status.cli} is not logged in: run \`${status.login}\``
    : undefined
