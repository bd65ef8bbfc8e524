/**
 * Fake vendor CLIs (`claude`, `codex`, `gemini`) for in-process tests of the CLI-agent provider: one small shell script
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

// A shell script, not a node one: a fake CLI starts in a millisecond instead of a node start-up's 40 ms of CPU. The
// plan is written out as the files it reads (what to print, the exit code, whether to hang); it records what it was
// given as files beside itself, `<name>.record.json` written last as the sign that the record is complete.
const SCRIPT = `#!/bin/sh
p="$0"
if [ "$1" = "--version" ]; then cat "$p.version"; exit 0; fi
if [ "$2" = "status" ] && [ -f "$p.login" ]; then cat "$p.login"; exit "$(cat "$p.login.code")"; fi
rm -f "$p.record.json" "$p.rec.settings"
echo $$ > "$p.rec.pid"
for a in "$@"; do printf '%s\\0' "$a"; done > "$p.rec.args"
cat > "$p.rec.stdin"
pwd -P > "$p.rec.cwd"
ls -A > "$p.rec.files"
env -0 > "$p.rec.env"
if [ -n "$GEMINI_CLI_HOME" ] && [ -f "$GEMINI_CLI_HOME/.gemini/settings.json" ]; then
  cat "$GEMINI_CLI_HOME/.gemini/settings.json" > "$p.rec.settings"
fi
: > "$p.record.json"
cat "$p.out"
cat "$p.err" >&2
if [ -f "$p.hang" ]; then trap '' TERM; exec sleep 1000000; fi
exit "$(cat "$p.exit")"
`

export interface FakeCliDir {
  readonly dir: string
  /** This process's environment with `dir` first on PATH. */
  readonly env: () => NodeJS.ProcessEnv
  plan(name: "claude" | "codex" | "gemini", plan: CliPlan): void
  /** What the last run of `name` recorded. */
  record(name: "claude" | "codex" | "gemini"): CliRecord
}

/** The plan as the files the script reads. */
const writePlan = (base: string, plan: CliPlan): void => {
  const write = (suffix: string, text: string) => fs.writeFileSync(`${base}.${suffix}`, text)
  write("out", plan.lines.map((line) => `${typeof line === "string" ? line : JSON.stringify(line)}\n`).join(""))
  write("err", plan.stderr ?? "")
  write("exit", String(plan.exit ?? 0))
  write("version", `${plan.version ?? "0.0.0"}\n`)
  for (const suffix of ["hang", "login", "login.code"]) fs.rmSync(`${base}.${suffix}`, { force: true })
  if (plan.hang === true) write("hang", "")
  if (plan.login !== undefined) {
    write("login", plan.login.output)
    write("login.code", String(plan.login.code))
  }
}

/** What the script recorded, read back into one record. */
const readRecord = (base: string): CliRecord => {
  const read = (suffix: string) => fs.readFileSync(`${base}.rec.${suffix}`, "utf8")
  const settings = fs.existsSync(`${base}.rec.settings`) ? { settings: JSON.parse(read("settings")) as unknown } : {}
  const env = Object.fromEntries(
    read("env").split("\0").filter((entry) => entry !== "").map((
      entry
    ) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)])
  )
  return {
    pid: Number(read("pid")),
    args: read("args").split("\0").slice(0, -1),
    stdin: read("stdin"),
    cwd: read("cwd").trimEnd(),
    files: read("files").split("\n").filter((file) => file !== ""),
    env,
    ...settings
  }
}

/** Writes the three fake CLIs into `dir`. */
export const makeFakeCliDir = (dir: string): FakeCliDir => {
  for (const name of ["claude", "codex", "gemini"]) fs.writeFileSync(path.join(dir, name), SCRIPT, { mode: 0o755 })
  return {
    dir,
    env: () => ({ ...process.env, PATH: `${dir}${path.delimiter}${process.env["PATH"] ?? ""}` }),
    plan: (name, plan) => writePlan(path.join(dir, name), plan),
    record: (name) => readRecord(path.join(dir, name))
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
