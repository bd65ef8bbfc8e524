/**
 * The built CLI in a child process: wall time from spawn to exit and, on Linux, the child's peak RSS and
 * CPU time sampled from /proc while it runs.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import type { BenchContext } from "./context.js"
import type { Fake } from "./fake.js"

interface Spawned {
  readonly code: number | null
  readonly ms: number
  readonly stderr: string
  readonly peakRssKb: number | undefined
  /** CPU time (user + system) of the child, as last sampled before it exited. */
  readonly cpuMs: number | undefined
}

/** Spawns the built CLI; wall time from spawn to exit, and the peak RSS (VmHWM, Linux) when asked. */
export const spawnCli = (
  ctx: BenchContext,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: { readonly rss?: boolean } = {}
): Promise<Spawned> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [ctx.cliEntry, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: ctx.tmp, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)))
    let peak: number | undefined
    let cpuMs: number | undefined
    const poll = options.rss
      ? setInterval(() => {
        peak = Math.max(peak ?? 0, peakRssOf(child) ?? 0)
        cpuMs = cpuMsOf(child) ?? cpuMs
      }, 100)
      : undefined
    child.on("error", reject)
    child.on("exit", (code) => {
      const ms = performance.now() - started
      if (poll) clearInterval(poll)
      resolve({ code, ms, stderr, peakRssKb: peak, cpuMs })
    })
  })

const peakRssOf = (child: ChildProcess): number | undefined => {
  try {
    const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8")
    const match = /VmHWM:\s+(\d+) kB/.exec(status)
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** utime + stime from /proc/PID/stat (Linux; clock ticks of 10 ms). */
const cpuMsOf = (child: ChildProcess): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${child.pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

/** The CLI's environment for a run against the fake, its run directories under `outputDir`. */
export const cliEnv = (fake: Fake, outputDir: string): Record<string, string> => ({
  OPENROUTER_BASE_URL: fake.url,
  PARALLEL_LLM_OUTPUT_DIR: outputDir,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_LOG_LEVEL: "warning"
})
