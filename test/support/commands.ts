import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

// Runs the tools a user runs around the package (npm, npx, mcpb, the installed bin) as child processes.

export interface CommandResult {
  /** Exit code; null when the process died of a signal. */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface CommandOptions {
  readonly cwd: string
  /** The whole environment of the child (nothing is inherited). */
  readonly env: Readonly<Record<string, string>>
  /** Kill the child (SIGKILL) after this long; generous by default. */
  readonly timeoutMs?: number
}

/** Runs a command to its end with stdin closed, collecting its output. */
export const runCommand = (command: string, args: ReadonlyArray<string>, options: CommandOptions): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/**
 * An environment for npm and npx that sees nothing of the user's: PATH, a scratch HOME (no ~/.npmrc) and a
 * scratch npm cache, so an install that works here needs nothing the machine happened to hold.
 */
export const npmEnv = (scratch: string): Record<string, string> => {
  const home = path.join(scratch, "home")
  fs.mkdirSync(home, { recursive: true })
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    npm_config_cache: path.join(scratch, "npm-cache"),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false"
  }
}
