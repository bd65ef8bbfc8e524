/**
 * `npm run bench`: performance figures against the loopback fake (in a worker thread) and beside a
 * bare-Node floor, printed as tables and written to bench/results/latest.json. Each figure is the median
 * of several runs. `BENCH_QUICK=1` runs each measurement a few times on a small batch;
 * `BENCH_ONLY=calls,events` runs only those; the scale run needs `BENCH_SCALE=1` or `BENCH_ONLY=scale`.
 * Never part of `npm test`: these are figures, and the machine decides them.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { memoryTmp } from "../test/support/memoryTmp.js"
import type { BenchContext } from "./context.js"
import { type Fake, startFake } from "./fake.js"
import { measureConnections, measureOverhead } from "./measure/overhead.js"
import { measureSoak } from "./measure/soak.js"
import { measureStartup } from "./measure/startup.js"
import { measureTail } from "./measure/tail.js"
import { measureCallCpu, measureEventCpu, measureScale } from "./measure/targets.js"
import { measureThroughput } from "./measure/throughput.js"
import { printTables } from "./tables.js"

/** In run order; the names are those `BENCH_ONLY` takes. */
const MEASUREMENTS: ReadonlyArray<readonly [string, (ctx: BenchContext, fake: Fake) => Promise<void>]> = [
  ["start-up", measureStartup],
  ["overhead", measureOverhead],
  ["connections", measureConnections],
  ["tail", measureTail],
  ["throughput", measureThroughput],
  ["soak", measureSoak],
  ["calls", measureCallCpu],
  ["events", measureEventCpu],
  ["scale", measureScale]
]

const main = async () => {
  const root = process.env.BENCH_ROOT ?? process.cwd()
  const quick = process.env.BENCH_QUICK === "1"
  const outFile = process.env.BENCH_OUT ?? path.join(root, "bench", "results", "latest.json")
  const cliEntry = path.join(root, "dist", "main.js")
  if (!fs.existsSync(cliEntry)) throw new Error(`${cliEntry} is missing: run npm run build first`)
  // Run directories on the repository's disk, like a user's data directory (not the machine's /tmp).
  fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
  const tmp = fs.mkdtempSync(path.join(root, "bench", "results", ".tmp-"))
  const memory = memoryTmp()
  const cpuTmp = memory === undefined ? tmp : fs.mkdtempSync(path.join(memory, "parallel-llm-bench-"))
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`)
  const ctx: BenchContext = { root, tmp, cpuTmp, quick, cliEntry, figures: {}, details: {}, log }

  const fake = await startFake()
  const started = performance.now()
  // BENCH_ONLY=overhead,throughput runs only those measurements (while working on one figure).
  const only = process.env.BENCH_ONLY?.split(",").map((name) => name.trim())
  try {
    for (const [name, measure] of MEASUREMENTS) {
      // The scale run is heavy (a thousand streams at once, twice): only when asked for.
      if (only === undefined ? name === "scale" && process.env.BENCH_SCALE !== "1" : !only.includes(name)) continue
      log(`${name}…`)
      await measure(ctx, fake)
    }
  } finally {
    await fake.close()
    fs.rmSync(tmp, { recursive: true, force: true })
    fs.rmSync(cpuTmp, { recursive: true, force: true })
  }
  printTables(ctx.figures)
  const report = {
    generatedAt: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    machine: { node: process.version, platform: process.platform, cpus: os.cpus().length, loadAverage: os.loadavg() },
    cpuTargetsWriteTo: memory === undefined ? "the repository's disk" : `${memory} (memory)`,
    durationMs: Math.round(performance.now() - started),
    figures: ctx.figures,
    details: ctx.details
  }
  fs.mkdirSync(path.dirname(outFile), { recursive: true })
  fs.writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`)
  log(`figures written to ${path.relative(root, outFile) || outFile}`)
}

await main()
