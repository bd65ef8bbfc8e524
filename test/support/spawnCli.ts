import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root and the built CLI entry, as `npm run build` makes it. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
export const cliEntry = path.join(repoRoot, "dist", "main.js")

/** The built entry; builds it once when a test file runs without `npm test` (which builds first). */
export const ensureBuilt = (): void => {
  if (!fs.existsSync(cliEntry)) execFileSync("npm", ["run", "build"], { cwd: repoRoot, stdio: "ignore" })
}

export interface CliResult {
  /** Exit code; null only when the process died of a signal it did not handle. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  /** The whole environment of the child (nothing is inherited but the code cache's root, see `codeCacheRoot`). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Text piped to stdin then closed; "ignore" gives /dev/null; default: an empty pipe, closed at once. */
  readonly stdin?: string | "ignore"
  readonly cwd?: string
  /** Kill the child (SIGKILL) after this long; generous by default. */
  readonly timeoutMs?: number
}

export interface RunningCli {
  readonly child: ChildProcess
  readonly done: Promise<CliResult>
  /** Output so far. */
  readonly stdout: () => string
  readonly stderr: () => string
}

/**
 * Where the bin keeps its V8 code cache (dist/main.js) unless a test sets XDG_CACHE_HOME: the runner's own cache
 * root, as the servers of `serverEnv` (the real HOME) already use. Tests give the CLI a scratch HOME, under which each
 * first run of a command compiled the whole bundle again and wrote a cache of it (0.2 CPU-s a process). A cache costs
 * or saves speed, never changes an outcome (test/e2e/codeCache.test.ts sets its own).
 */
const codeCacheRoot = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache")

/** `env` with the code cache's root added, unless it names one. */
export const withCodeCache = (env: Readonly<Record<string, string>>): Record<string, string> => ({ XDG_CACHE_HOME: codeCacheRoot, ...env })

/** Starts `node dist/main.js ...args` the way a user runs it: its own process, its own stdio. */
export const startCli = (args: ReadonlyArray<string>, options: CliOptions): RunningCli => {
  if (!fs.existsSync(cliEntry)) throw new Error(`${cliEntry} is missing: run npm run build`)
  const given: Record<string, string> = {}
  for (const [key, value] of Object.entries(options.env)) if (value !== undefined) given[key] = value
  const env = withCodeCache(given)
  const child = spawn(process.execPath, [cliEntry, ...args], {
    cwd: options.cwd ?? repoRoot,
    env,
    stdio: [options.stdin === "ignore" ? "ignore" : "pipe", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  if (child.stdin) {
    child.stdin.on("error", () => undefined) // the CLI may exit before reading it all
    child.stdin.end(typeof options.stdin === "string" && options.stdin !== "ignore" ? options.stdin : undefined)
  }
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 45_000)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, done, stdout: () => stdout, stderr: () => stderr }
}

/** Runs the CLI to the end. */
export const runCli = (args: ReadonlyArray<string>, options: CliOptions): Promise<CliResult> => startCli(args, options).done

/** Lines of text without the trailing empty one. */
export const linesOf = (text: string): ReadonlyArray<string> => text.split("\n").filter((line, i, all) => line !== "" || i < all.length - 1)

/** Every file under `dir`, relative paths with forward slashes, sorted. */
export const listTree = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name)
      return entry.isDirectory() ? listTree(full).map((f) => `${entry.name}/${f}`) : [entry.name]
    })
    .sort()

/** Makes fresh, distinctly named directories under `root`, one per call. */
export const freshDirs = (root: string) => {
  let counter = 0
  return (name: string): string => {
    const dir = path.join(root, `${name}-${++counter}`)
    fs.mkdirSync(dir, { recursive: true })
    return dir
  }
}
