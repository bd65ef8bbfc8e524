import { Command, type CommandExecutor, type FileSystem } from "@effect/platform"
import { Chunk, Effect, Fiber, Option, Stream } from "effect"
import { AgentUnavailable, NetworkError, type ProviderError, ResponseTooLarge } from "../../../domain/errors.js"
import type { ModelPart } from "../../../domain/modelCall.js"
import { executableOnPath } from "./executableOnPath.js"

// Running one CLI agent headless: the process, its stdout as lines, and its end. Scoped: closing the scope (the
// answer is whole, a timeout, a cancel, the quorum) kills the CLI's whole process group within a second.

/** What one CLI says, line by line: the parts a line carries, or the failure it reports. */
export interface LineDecoder {
  readonly line: (text: string) => ReadonlyArray<ModelPart> | ProviderError
  /** Stdout ended before the CLI's final event: why, from its exit code and the end of its stderr. */
  readonly exit: (code: number | undefined, stderr: string) => ReadonlyArray<ModelPart> | ProviderError
}

export interface AgentInvocation {
  /** The requested model id (`claude-code/sonnet`): errors name it. */
  readonly model: string
  readonly executable: string
  readonly args: ReadonlyArray<string>
  /** The whole environment of the process (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  readonly stdin: string
  /** How to install the CLI, for the one-line message when it is missing. */
  readonly install: string
  /** Stdout bytes past which the call fails (a runaway CLI). */
  readonly maxBytes: number
}

/** How long the CLI gets to end on SIGTERM before its group gets SIGKILL. */
const TERM_GRACE = "700 millis"
/** The end of stderr kept for an error message. */
const STDERR_TAIL = 4096

const isParts = (result: ReadonlyArray<ModelPart> | ProviderError): result is ReadonlyArray<ModelPart> => Array.isArray(result)

/**
 * SIGTERM to the group, SIGKILL when it lingers; then SIGKILL to whatever of the group is left (a relaunched child).
 * The waits are made interruptible, or a finalizer (uninterruptible) could never time them out.
 */
const killGroup = (proc: CommandExecutor.Process): Effect.Effect<void> =>
  Effect.interruptible(proc.kill("SIGTERM")).pipe(
    Effect.timeoutOption(TERM_GRACE),
    Effect.flatMap(Option.match({
      onNone: () => Effect.interruptible(proc.kill("SIGKILL")).pipe(Effect.timeout(TERM_GRACE)),
      onSome: () => Effect.void
    })),
    Effect.ignore,
    Effect.zipRight(Effect.try(() => process.kill(-proc.pid, "SIGKILL")).pipe(Effect.ignore))
  )

/** The last {@link STDERR_TAIL} characters the CLI wrote to stderr. */
const stderrTail = (stderr: Stream.Stream<Uint8Array, unknown>): Effect.Effect<string> =>
  stderr.pipe(
    Stream.decodeText(),
    Stream.runFold("", (kept, text) => (kept + text).slice(-STDERR_TAIL)),
    Effect.orElseSucceed(() => "")
  )

/** The one line for a CLI its PATH does not have, whether the lookup or the spawn found that out. */
const notOnPath = (invocation: AgentInvocation): ProviderError =>
  new AgentUnavailable({
    model: invocation.model,
    message: `${invocation.executable} is not on PATH: install it (${invocation.install}) or drop ${invocation.model}`
  })

const spawnFailure = (invocation: AgentInvocation, reason: string, message: string): ProviderError =>
  reason === "NotFound"
    ? notOnPath(invocation)
    : new NetworkError({ model: invocation.model, message: `${invocation.executable} could not be started: ${message}` })

/** Fails once stdout has passed `maxBytes`: the CLI is killed there. */
const capped = (invocation: AgentInvocation) => (stdout: Stream.Stream<Uint8Array, ProviderError>) =>
  Stream.mapAccumEffect(stdout, 0, (seen, bytes) => {
    const total = seen + bytes.length
    return total > invocation.maxBytes
      ? Effect.fail(
        new ResponseTooLarge({
          model: invocation.model,
          limitBytes: invocation.maxBytes,
          message: `${invocation.executable} wrote more than ${invocation.maxBytes} bytes`
        })
      )
      : Effect.succeed([total, bytes] as const)
  })

/**
 * The CLI's answer as parts: each stdout line through `decoder.line`, then, if no `Finish` came, `decoder.exit`.
 * The stream ends at `Finish`, which closes the scope: a CLI that lingers after its answer is killed, not waited for.
 * A CLI not on the PATH of its environment fails as its spawn would, without one.
 */
export const runAgent = (
  invocation: AgentInvocation,
  decoder: LineDecoder
): Stream.Stream<ModelPart, ProviderError, CommandExecutor.CommandExecutor | FileSystem.FileSystem> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    if (Option.isNone(yield* executableOnPath(invocation.executable, invocation.env, invocation.cwd))) {
      return yield* Effect.fail(notOnPath(invocation))
    }
    const command = Command.make(invocation.executable, ...invocation.args).pipe(
      Command.workingDirectory(invocation.cwd),
      Command.env(invocation.env, { extendEnv: false }),
      Command.feed(invocation.stdin)
    )
    const proc = yield* Command.start(command).pipe(
      Effect.mapError((e) => spawnFailure(invocation, e._tag === "SystemError" ? e.reason : "", e.message))
    )
    yield* Effect.addFinalizer(() => killGroup(proc))
    const stderr = yield* Effect.fork(stderrTail(proc.stderr))
    const decodeChunk = (lines: Chunk.Chunk<string>): Effect.Effect<Chunk.Chunk<ModelPart>, ProviderError> => {
      const parts: Array<ModelPart> = []
      for (const line of lines) {
        if (line.trim() === "") continue
        const result = decoder.line(line)
        if (!isParts(result)) return Effect.fail(result)
        parts.push(...result)
      }
      return Effect.succeed(Chunk.unsafeFromArray(parts))
    }
    const ending = Effect.gen(function*() {
      const code = yield* proc.exitCode.pipe(Effect.option)
      const result = decoder.exit(Option.getOrUndefined(code), yield* Fiber.join(stderr))
      return isParts(result) ? Chunk.unsafeFromArray([...result]) : yield* Effect.fail(result)
    })
    const stdout = proc.stdout.pipe(
      Stream.mapError((e) => new NetworkError({ model: invocation.model, message: `${invocation.executable}: ${e.message}` }))
    )
    return capped(invocation)(stdout).pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.mapChunksEffect(decodeChunk),
      Stream.concat(Stream.fromEffect(ending).pipe(Stream.flattenChunks)),
      Stream.takeUntil((part) => part._tag === "Finish")
    )
  }))
