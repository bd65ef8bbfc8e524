/**
 * Fake vendor CLIs (`claude`, `codex`, `gemini`) for in-process tests of the CLI-agent provider: one small node script
 * under each name in a directory to put first on PATH. Each run follows the plan written for its name (`plan`): the
 * JSON lines it prints, stderr, its exit code, or a hang after the lines; it records its pid, argv, stdin and cwd
 * beside itself, so a test reads what the provider ran and whether the process is still alive.
 */
import * as fs from "node:fs"
import * as path from "node:path"

export interface CliPlan {
  /** Printed one JSON value a line, in order (a string is printed as is). */
  readonly lines: ReadonlyArray<unknown>
  readonly stderr?: string
  readonly exit?: number
  /** After the lines, never exit (until killed): a cancel test's mid-stream. */
  readonly hang?: boolean
  /** Printed (and exit 0) when the CLI is asked `--version`. */
  readonly version?: string
  /** The answer to a login status command (`auth status`, `login status`): its output and exit code. */
  readonly login?: { readonly output: string; readonly code: number }
}

export interface CliRecord {
  readonly pid: number
  readonly args: ReadonlyArray<string>
  readonly stdin: string
  readonly cwd: string
  /** The files of the working directory when it started. */
  readonly files: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  /** gemini: its settings.json under GEMINI_CLI_HOME, when there was one. */
  readonly settings?: unknown
}

const SCRIPT = `#!/usr/bin/env node
const fs = require("fs"), path = require("path")
const name = path.basename(process.argv[1]), dir = path.dirname(process.argv[1])
const plan = JSON.parse(fs.readFileSync(path.join(dir, name + ".plan.json"), "utf8"))
const args = process.argv.slice(2)
if (args[0] === "--version") { process.stdout.write((plan.version || "0.0.0") + "\\n"); process.exit(0) }
if (args[1] === "status" && plan.login) { process.stdout.write(plan.login.output); process.exit(plan.login.code) }
let stdin = ""
process.stdin.on("data", (d) => { stdin += d })
process.stdin.on("end", () => {
  const home = process.env.GEMINI_CLI_HOME
  const settingsFile = home && path.join(home, ".gemini", "settings.json")
  const settings = settingsFile && fs.existsSync(settingsFile) ? JSON.parse(fs.readFileSync(settingsFile, "utf8")) : undefined
  const files = fs.readdirSync(process.cwd())
  const record = { pid: process.pid, args, stdin, cwd: process.cwd(), files, env: process.env, settings }
  fs.writeFileSync(path.join(dir, name + ".record.json"), JSON.stringify(record))
  for (const line of plan.lines) process.stdout.write((typeof line === "string" ? line : JSON.stringify(line)) + "\\n")
  if (plan.stderr) process.stderr.write(plan.stderr)
  if (plan.hang) { process.on("SIGTERM", () => {}); setInterval(() => {}, 1000) } else process.exitCode = plan.exit || 0
})
`

export interface FakeCliDir {
  readonly dir: string
  /** This process's environment with `dir` first on PATH. */
  readonly env: () => NodeJS.ProcessEnv
  plan(name: "claude" | "codex" | "gemini", plan: CliPlan): void
  /** What the last run of `name` recorded. */
  record(name: "claude" | "codex" | "gemini"): CliRecord
}

/** Writes the three fake CLIs into `dir`. */
export const makeFakeCliDir = (dir: string): FakeCliDir => {
  for (const name of ["claude", "codex", "gemini"]) fs.writeFileSync(path.join(dir, name), SCRIPT, { mode: 0o755 })
  return {
    dir,
    env: () => ({ ...process.env, PATH: `${dir}${path.delimiter}${process.env["PATH"] ?? ""}` }),
    plan: (name, plan) => fs.writeFileSync(path.join(dir, `${name}.plan.json`), JSON.stringify(plan)),
    record: (name) => JSON.parse(fs.readFileSync(path.join(dir, `${name}.record.json`), "utf8")) as CliRecord
  }
}

/** Whether a process of this pid is alive (signal 0 checks without killing). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
