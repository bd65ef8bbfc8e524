import { Context } from "effect"
import * as os from "node:os"

/** Where the CLI writes: the process's stdout or stderr (a terminal, a pipe, a file). */
export interface OutputStream {
  write(text: string): unknown
  readonly isTTY?: boolean | undefined
  /** The terminal's width; a pseudo-terminal without a size reports 0. */
  readonly columns?: number | undefined
}

/** Where the CLI reads a prompt from when none is given: the process's stdin. */
export interface InputStream extends AsyncIterable<unknown> {
  readonly isTTY?: boolean | undefined
}

/** What a command line runs in: its words, environment, directory and standard streams. */
export interface ProcessIoShape {
  /** The command line after the program's name. */
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
  /** `~`: where the default config file and run directories live. */
  readonly home: string
  readonly stdin: InputStream
  readonly stdout: OutputStream
  readonly stderr: OutputStream
}

/** The running process's own. */
export const processIoOf = (process: NodeJS.Process): ProcessIoShape => ({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  home: os.homedir(),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr
})

/**
 * The CLI's process, read through this service and never through `process` directly, so that one command line
 * runs the same whether it is the process's own (the default) or one a test hands in with captured streams.
 */
export class ProcessIo extends Context.Reference<ProcessIo>()("parallel-llm/ProcessIo", {
  defaultValue: (): ProcessIoShape => processIoOf(process)
}) {}
