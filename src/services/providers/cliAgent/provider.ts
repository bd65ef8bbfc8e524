import { CommandExecutor, FileSystem, Path } from "@effect/platform"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, Stream } from "effect"
import { type CliAgentName, cliAgentOf } from "../../../domain/cliAgent.js"
import { AgentUnavailable, type ProviderError } from "../../../domain/errors.js"
import type { ModelPart, ModelProvider, ModelRequest } from "../../../domain/modelCall.js"
import { buildOnce } from "../../buildOnce.js"
import { Settings } from "../../settings.js"
import type { AgentCall, AgentCli } from "./agentCli.js"
import { runAgent } from "./agentProcess.js"
import { agentPrompt } from "./agentPrompt.js"
import { claudeCode } from "./claudeCode.js"
import { codexWith } from "./codex.js"
import { geminiCli } from "./geminiCli.js"

/** Our own secrets, never handed to a vendor's CLI. */
const WITHHELD = new Set(["OPENROUTER_API_KEY", "PARALLEL_LLM_HTTP_TOKEN"])

/** The environment a CLI inherits: ours, less our secrets. */
export const inheritedEnv = (env: NodeJS.ProcessEnv): Readonly<Record<string, string>> =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !WITHHELD.has(e[0])))

/** The three CLIs, Codex with the user's `-c` overrides. */
export const agentClis = (codexConfig: ReadonlyArray<string>): Readonly<Record<CliAgentName, AgentCli>> => ({
  "claude-code": claudeCode,
  codex: codexWith(codexConfig),
  "gemini-cli": geminiCli
})

/** Stdout per call, in multiples of the answer cap: stream-json repeats the text (deltas, message, result). */
const STDOUT_FACTOR = 4

/** The platform's command executor, over the real file system. */
export const nodeExecutor = Layer.provide(NodeCommandExecutor.layer, NodeFileSystem.layer)

/** What the provider runs on: `executorLayer`'s executor, the file system and paths. */
const platformOf = (executorLayer: Layer.Layer<CommandExecutor.CommandExecutor>) =>
  Layer.mergeAll(executorLayer, NodeFileSystem.layer, NodePath.layer)

/**
 * The default platform, built once per process on first use (it holds nothing: a stateless executor over the file
 * system): built for every ModelClient instead, it cost each command line and MCP connection 1.5 ms of CPU.
 */
const nodePlatform = buildOnce(platformOf(nodeExecutor))

/** `make` on the platform of `executorLayer`: the default one built once. */
const onPlatform = <A, E, R>(make: Effect.Effect<A, E, R>, executorLayer: Layer.Layer<CommandExecutor.CommandExecutor>) =>
  executorLayer === nodeExecutor
    ? Effect.flatMap(nodePlatform, (platform) => Effect.provide(make, platform))
    : Effect.provide(make, platformOf(executorLayer))

/**
 * The CLI-agent provider over the environment `environment` gives at each call (the CLIs are found on its PATH and
 * inherit it, less our secrets): a model id `claude-code/…`, `codex/…` or `gemini-cli/…` answered by that CLI run headless,
 * answer only (docs/cli-agents.md), in a fresh working directory holding only the call's attachments. At most
 * `cliAgentConcurrency` of them run at once in the process (a subscription's limits are per account). Every call
 * runs its CLI with the one executor `executorLayer` builds, with the provider.
 */
export const cliAgentsIn = (
  environment: () => NodeJS.ProcessEnv,
  executorLayer: Layer.Layer<CommandExecutor.CommandExecutor> = nodeExecutor
) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    // One executor for every call of the provider: a layer provided per call is built again for each.
    const executor = yield* CommandExecutor.CommandExecutor
    const permits = yield* Effect.makeSemaphore(settings.cliAgentConcurrency)
    const clis = agentClis(settings.codexConfig)

    const prepare = Effect.fnUntraced(function*(request: ModelRequest, cli: AgentCli, model: string | undefined) {
      const env = inheritedEnv(environment())
      const prompt = agentPrompt(request.messages, cli.systemFlag)
      const workDir = yield* fs.makeTempDirectoryScoped({ prefix: "parallel-llm-agent-" })
      const scratch = yield* fs.makeTempDirectoryScoped({ prefix: "parallel-llm-agent-home-" })
      for (const file of prompt.attachments) yield* fs.writeFile(path.join(workDir, file.name), file.bytes, { mode: 0o600 })
      const call: AgentCall = {
        model,
        system: prompt.system,
        scratch,
        home: env["HOME"] ?? env["USERPROFILE"] ?? "",
        images: prompt.attachments.filter((a) => a.image).map((a) => a.name)
      }
      for (const file of cli.files(call, env)) {
        const target = path.join(scratch, file.path)
        yield* fs.makeDirectory(path.dirname(target), { recursive: true })
        if ("text" in file) yield* fs.writeFileString(target, file.text, { mode: 0o600 })
        else if (yield* fs.exists(file.linkTo)) yield* fs.symlink(file.linkTo, target)
      }
      return {
        model: request.model,
        executable: cli.executable,
        args: cli.args(call),
        env: { ...env, ...cli.env(call, env) },
        cwd: workDir,
        stdin: prompt.prompt,
        install: cli.install,
        maxBytes: settings.maxResponseBytes * STDOUT_FACTOR
      }
    })

    const stream = (request: ModelRequest): Stream.Stream<ModelPart, ProviderError> => {
      const agent = cliAgentOf(request.model)
      if (agent === undefined) {
        return Stream.fail(new AgentUnavailable({ model: request.model, message: `${request.model} is not a CLI agent id` }))
      }
      const cli = clis[agent.cli]
      return Stream.unwrapScoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(permits.take(1), () => permits.release(1))
        const invocation = yield* prepare(request, cli, agent.model).pipe(
          Effect.mapError((e) =>
            new AgentUnavailable({ model: request.model, message: `${cli.name}: cannot prepare its directory: ${e.message}` })
          )
        )
        return runAgent(invocation, cli.decoder(request.model))
      })).pipe(Stream.provideService(CommandExecutor.CommandExecutor, executor), Stream.provideService(FileSystem.FileSystem, fs))
    }
    return { stream }
  }).pipe((make) => onPlatform(make, executorLayer))

/** The CLI-agent provider over this process's environment. */
export const cliAgents = cliAgentsIn(() => process.env)

/** One provider of two: CLI-agent ids to the CLI agents, every other id to `http`; the catalogue is `http`'s. */
export const routed = (http: ModelProvider, agents: Pick<ModelProvider, "stream">): ModelProvider => ({
  stream: (request) => (cliAgentOf(request.model) !== undefined ? agents.stream(request) : http.stream(request)),
  listModels: http.listModels
})
