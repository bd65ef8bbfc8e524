import { Cause, Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { runCli, type ServiceOverrides } from "../../src/runCli.js"
import { ProcessIo, type ProcessIoShape } from "../../src/services/processIo.js"
import { type CliResult, repoRoot } from "./spawnCli.js"

// Runs a command line the way `dist/main.js` does (`runCli`, the real command tree and programs), inside the test's
// own process: no start-up, no bundle. Spawn the built CLI (spawnCli.ts) only where a process is the point.

export interface InProcessOptions {
  /** The whole environment the command line sees (nothing of the test process's). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Text on stdin, then its end; "ignore" is /dev/null; default: nothing. `tty` makes stdin a terminal. */
  readonly stdin?: string | "ignore" | "tty"
  readonly cwd?: string
  /** Services put over the command's own (a scripted model client, say). */
  readonly overrides?: ServiceOverrides
  /** Interrupt the command line after this long (it then ends as Ctrl-C would); generous by default. */
  readonly timeoutMs?: number
}

/** The package's version, as the bin reads it: read once per worker, not once per command line. */
const version = ((): string => {
  const pkg: unknown = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
  return typeof pkg === "object" && pkg !== null && "version" in pkg && typeof pkg.version === "string" ? pkg.version : "0.0.0"
})()

/** A stream that keeps what is written to it, as a pipe would (no terminal). */
const captured = () => {
  let text = ""
  return {
    stream: {
      write: (chunk: string) => {
        text += chunk
        return true
      }
    },
    text: () => text
  }
}

const stdinOf = (stdin: InProcessOptions["stdin"]): ProcessIoShape["stdin"] =>
  stdin === "tty"
    ? Object.assign(Readable.from([]), { isTTY: true })
    : Readable.from(typeof stdin === "string" && stdin !== "ignore" ? [Buffer.from(stdin)] : [])

/**
 * `parallel-llm ...args` as an Effect, to its exit code (130 when interrupted, as the bin's): for tests that
 * drive it with TestClock or run it beside other fibers.
 */
export const cliEffect = (args: ReadonlyArray<string>, options: InProcessOptions): Effect.Effect<CliResult> =>
  Effect.suspend(() => {
    const stdout = captured()
    const stderr = captured()
    const io: ProcessIoShape = {
      argv: args,
      env: options.env,
      cwd: options.cwd ?? repoRoot,
      home: options.env.HOME ?? os.homedir(),
      stdin: stdinOf(options.stdin),
      stdout: stdout.stream,
      stderr: stderr.stream
    }
    const program = runCli({ version, ...(options.overrides ? { overrides: options.overrides } : {}) })
    // Past its time the command line is interrupted from inside, so it still ends with what it printed (as a killed process does).
    const limited = options.timeoutMs === undefined
      ? program
      : Effect.raceFirst(program, Effect.zipRight(Effect.sleep(options.timeoutMs), Effect.interrupt))
    return Effect.exit(Effect.provideService(limited, ProcessIo, io)).pipe(Effect.map((exit): CliResult => {
      const code = Exit.isSuccess(exit) ? exit.value : Cause.isInterruptedOnly(exit.cause) ? 130 : 1
      if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) stderr.stream.write(`parallel-llm: ${Cause.pretty(exit.cause)}\n`)
      return { code, signal: null, stdout: stdout.text(), stderr: stderr.text() }
    }))
  })

/** Runs `parallel-llm ...args` in-process to its end; `timeoutMs` interrupts it (exit 130, as Ctrl-C). */
export const runCliInProcess = (args: ReadonlyArray<string>, options: InProcessOptions): Promise<CliResult> =>
  Effect.runPromise(cliEffect(args, { ...options, timeoutMs: options.timeoutMs ?? 45_000 }))
