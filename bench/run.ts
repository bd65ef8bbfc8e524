/**
 * `npm run bench`: performance figures against the loopback fake (in a worker thread), printed as a
 * table and written to bench/results/latest.json. Each figure is the median of several runs.
 * `BENCH_QUICK=1` runs each measurement a few times on a small batch; `BENCH_ONLY=calls,events` runs only
 * those; the 1,000-stream scale run needs `BENCH_SCALE=1` or `BENCH_ONLY=scale`. Never part of
 * `npm test`: these are figures, and the machine decides them.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Undici from "@effect/platform-node/Undici"
import { Effect, Layer, ManagedRuntime } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { runPipeline, type RunRequest } from "../src/programs/runPipeline.js"
import { layerLogging } from "../src/services/Logging.js"
import { layerOpenRouterClient } from "../src/services/OpenRouterClient.js"
import { layerRunStore } from "../src/services/RunStore.js"
import { layerSettings, loadSettings, type RawSettings, type SettingsValue } from "../src/services/Settings.js"
import type { Behavior, Script } from "../test/support/fakeOpenRouter.js"
import { realHttpClientLayer } from "../test/support/realHttpClient.js"
import type { FakeReply, FakeRequest, FakeStats } from "./fakeWorker.js"
import { FIGURES, meetsTarget, TARGETS } from "./figures.js"
import { measureCallCpu, measureEventCpu, measureScale } from "./targets.js"

const root = process.env.BENCH_ROOT ?? process.cwd()
const quick = process.env.BENCH_QUICK === "1"
const outFile = process.env.BENCH_OUT ?? path.join(root, "bench", "results", "latest.json")
const cliEntry = path.join(root, "dist", "main.js")
// Run directories on the repository's disk, like a user's data directory (not the machine's /tmp).
fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
const tmp = fs.mkdtempSync(path.join(root, "bench", "results", ".tmp-"))

const log = (line: string) => process.stderr.write(`bench: ${line}\n`)

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const repeat = async (times: number, once: () => Promise<number>): Promise<number> => {
  const values: Array<number> = []
  for (let i = 0; i < times; i++) values.push(await once())
  return median(values)
}

// --- The fake, in its worker thread ---

interface Fake {
  readonly url: string
  readonly setScript: (script: Script, fallback?: Behavior) => Promise<FakeStats>
  readonly reset: () => Promise<FakeStats>
  readonly stats: () => Promise<FakeStats>
  readonly close: () => Promise<void>
}

type Command = { readonly type: "setScript"; readonly script: Script; readonly default?: Behavior } | {
  readonly type: "reset" | "stats" | "close"
}

const startFake = (): Promise<Fake> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./fakeWorker.mjs", import.meta.url))
    let nextId = 0
    const pending = new Map<number, (stats: FakeStats) => void>()
    const call = (command: Command): Promise<FakeStats> =>
      new Promise((done) => {
        const id = ++nextId
        pending.set(id, done)
        worker.postMessage({ ...command, id } as FakeRequest)
      })
    worker.on("error", reject)
    worker.on("message", (reply: FakeReply) => {
      if (reply.type === "ready") {
        resolve({
          url: reply.url,
          setScript: (script, fallback) => call({ type: "setScript", script, ...(fallback ? { default: fallback } : {}) }),
          reset: () => call({ type: "reset" }),
          stats: () => call({ type: "stats" }),
          close: async () => {
            await call({ type: "close" })
            await worker.terminate()
          }
        })
      } else {
        pending.get(reply.id)?.(reply.stats)
        pending.delete(reply.id)
      }
    })
  })

// --- Workloads ---

/** About 100 words: a short answer, streamed as one SSE event per word by the fake. */
const answerText = (model: string) =>
  `${model} answers: ` +
  "the question has a short answer and a longer explanation, which this paragraph stands in for. ".repeat(6) +
  "In short: it depends on the constraints, and the trade-offs are listed above."

const CANDIDATES = ["bench/c1", "bench/c2", "bench/c3", "bench/c4", "bench/c5"]
const SYNTH = "bench/synth"
const CANDIDATE_MS = [100, 125, 150, 175, 200]
const SYNTH_MS = 100
const IDEAL_MS = Math.max(...CANDIDATE_MS) + SYNTH_MS

const overheadScript = (): Script => ({
  ...Object.fromEntries(
    CANDIDATES.map((m, i) => [m, { kind: "ok", delayMs: CANDIDATE_MS[i]!, content: answerText(m) } satisfies Behavior])
  ),
  [SYNTH]: { kind: "ok", delayMs: SYNTH_MS, content: answerText(SYNTH) }
})

const settingsFor = (fake: Fake, extra: RawSettings = {}): Promise<SettingsValue> =>
  Effect.runPromise(
    loadSettings({
      flags: {
        baseUrl: fake.url,
        models: CANDIDATES.join(","),
        synthesizer: SYNTH,
        fallbackSynthesizers: "none",
        outputDir: path.join(tmp, "runs"),
        ...extra
      },
      env: {}
    }).pipe(Effect.map((loaded) => loaded.settings), Effect.provide(NodeFileSystem.layer))
  )

/** The services as `main.ts` composes them (pooled undici client, run store on disk, logger writing nowhere). */
const makeRuntime = (settings: SettingsValue) =>
  ManagedRuntime.make(
    Layer.mergeAll(layerOpenRouterClient, layerRunStore).pipe(
      Layer.provideMerge(layerSettings(settings)),
      Layer.provide(Layer.mergeAll(realHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(layerLogging(settings, [], () => undefined))
    )
  )

type Runtime = ReturnType<typeof makeRuntime>

const timedRun = async (runtime: Runtime, request: RunRequest) => {
  const started = performance.now()
  const result = await runtime.runPromise(runPipeline(request))
  return { ms: performance.now() - started, manifest: result.manifest }
}

interface Spawned {
  readonly code: number | null
  readonly ms: number
  readonly stderr: string
  readonly peakRssKb: number | undefined
  /** CPU time (user + system) of the child, as last sampled before it exited. */
  readonly cpuMs: number | undefined
}

/** Spawns the built CLI; wall time from spawn to exit, and the peak RSS (VmHWM, Linux) when asked. */
const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string>, options: { readonly rss?: boolean } = {}): Promise<Spawned> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [cliEntry, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: tmp, ...env },
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

const cliEnv = (fake: Fake, outputDir: string): Record<string, string> => ({
  OPENROUTER_BASE_URL: fake.url,
  PARALLEL_LLM_OUTPUT_DIR: outputDir,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_LOG_LEVEL: "warning"
})

// --- Measurements ---

const figures: Record<string, number> = {}
const details: Record<string, unknown> = {}
const targetContext = { root, tmp, quick, figures, details, log }

const measureOverhead = async (fake: Fake) => {
  await fake.setScript(overheadScript())
  const settings = await settingsFor(fake)
  const runtime = makeRuntime(settings)
  const request = { prompt: "What are the trade-offs? Answer briefly." }
  await timedRun(runtime, request) // warm-up: JIT, connections
  const times: Array<number> = []
  for (let i = 0; i < (quick ? 3 : 15); i++) {
    const { ms, manifest } = await timedRun(runtime, request)
    if (manifest.status !== "ok") throw new Error(`overhead run ended ${manifest.status}`)
    times.push(ms)
  }
  await runtime.dispose()
  figures["overhead.inProcess.wallMs"] = median(times)
  figures["overhead.inProcess.idealMs"] = IDEAL_MS
  figures["overhead.inProcess.ratio"] = median(times) / IDEAL_MS
  details.overheadInProcessMs = times

  // The physical limit on this machine: the same run (5 calls at once, then the synthesis) from a bare
  // undici client that only reads the bytes. It includes the fake's own time (timer lag, writing ~100
  // SSE events per answer from its worker thread), which no client can avoid.
  const agent = new Undici.Agent()
  const target = new URL(`${fake.url}/chat/completions`)
  const call = async (model: string) => {
    const body = JSON.stringify({ model, messages: [{ role: "user", content: request.prompt }], stream: true })
    const response = await agent.request({
      origin: target.origin,
      path: target.pathname,
      method: "POST",
      body,
      headers: { "content-type": "application/json" }
    })
    await response.body.text()
  }
  const floorOnce = async () => {
    const started = performance.now()
    await Promise.all(CANDIDATES.map(call))
    await call(SYNTH)
    return performance.now() - started
  }
  await floorOnce()
  const floors: Array<number> = []
  for (let i = 0; i < (quick ? 3 : 15); i++) floors.push(await floorOnce())
  await agent.close()
  figures["overhead.inProcess.floorMs"] = median(floors)
  figures["overhead.inProcess.floorRatio"] = median(times) / median(floors)
  details.overheadFloorMs = floors

  const env = cliEnv(fake, path.join(tmp, "cli-runs"))
  const args = ["ask", request.prompt, ...CANDIDATES.flatMap((m) => ["-m", m]), "-s", SYNTH]
  const cliTimes: Array<number> = []
  for (let i = 0; i < (quick ? 2 : 7); i++) {
    const run = await spawnCli(args, env)
    if (run.code !== 0) throw new Error(`ask exited ${run.code}: ${run.stderr}`)
    cliTimes.push(run.ms)
  }
  figures["overhead.cli.wallMs"] = median(cliTimes)
  figures["overhead.cli.ratio"] = median(cliTimes) / IDEAL_MS
  figures["overhead.cli.floorRatio"] = median(cliTimes) / median(floors)
  details.overheadCliMs = cliTimes
}

const measureConnections = async (fake: Fake) => {
  await fake.setScript(overheadScript())
  const settings = await settingsFor(fake)
  const runtime = makeRuntime(settings)
  const runs = quick ? 5 : 20
  for (let i = 0; i < runs; i++) await timedRun(runtime, { prompt: `sequential run ${i}` })
  const stats = await fake.stats()
  await runtime.dispose()
  figures["connections.sequentialRuns"] = runs
  figures["connections.accepted"] = stats.connections
  figures["connections.bound"] = settings.concurrency
}

/**
 * Batch answers are short (20 words): with 100-word answers the fake itself becomes the bottleneck, not
 * the pipeline (even a bare undici loop then falls well short of the ideal).
 */
const SHORT_ANSWER = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(" ")

const batchOnce = async (fake: Fake, prompts: number, args: ReadonlyArray<string>, label: string) => {
  await fake.setScript({}, { kind: "ok", delayMs: 50, content: SHORT_ANSWER })
  const dir = fs.mkdtempSync(path.join(tmp, "batch-"))
  const input = path.join(dir, "prompts.jsonl")
  fs.writeFileSync(
    input,
    Array.from({ length: prompts }, (_, i) => JSON.stringify({ prompt: `Question number ${i + 1}?` })).join("\n") + "\n"
  )
  const run = await spawnCli(
    ["batch", input, ...CANDIDATES.flatMap((m) => ["-m", m]), "-s", SYNTH, ...args],
    cliEnv(fake, path.join(dir, "runs")),
    { rss: true }
  )
  const stats = await fake.stats()
  const results = fs.readFileSync(path.join(dir, "prompts.results.jsonl"), "utf8").trim().split("\n")
  const ok = results.filter((line) => JSON.parse(line).status === "ok").length
  if (run.code !== 0 || ok !== prompts) {
    throw new Error(`batch (${label}) exited ${run.code} with ${ok}/${prompts} ok: ${run.stderr.slice(-2000)}`)
  }
  fs.rmSync(dir, { recursive: true, force: true })
  return { ms: run.ms, peakRssKb: run.peakRssKb ?? Number.NaN, cpuMs: run.cpuMs ?? Number.NaN, stats }
}

const measureThroughput = async (fake: Fake) => {
  const prompts = quick ? 40 : 1000
  const concurrency = 16
  const calls = prompts * (CANDIDATES.length + 1)
  const idealMs = (calls * 50) / concurrency
  const runs: Array<Awaited<ReturnType<typeof batchOnce>>> = []
  for (let i = 0; i < (quick ? 1 : 3); i++) {
    runs.push(await batchOnce(fake, prompts, ["--concurrency", String(concurrency), "--runs", String(concurrency)], "--runs 16"))
    log(`batch ${i + 1}: ${Math.round(runs.at(-1)!.ms)} ms`)
  }
  const wallMs = median(runs.map((r) => r.ms))
  figures["throughput.prompts"] = prompts
  figures["throughput.wallMs"] = wallMs
  figures["throughput.idealMs"] = idealMs
  figures["throughput.fraction"] = idealMs / wallMs
  figures["throughput.promptsPerSecond"] = prompts / (wallMs / 1000)
  figures["throughput.peakRssMb"] = Math.max(...runs.map((r) => r.peakRssKb)) / 1024
  figures["throughput.cpuMsPerPrompt"] = median(runs.map((r) => r.cpuMs)) / prompts
  figures["throughput.maxInFlight"] = Math.max(...runs.map((r) => r.stats.maxInFlight))
  figures["throughput.connections"] = Math.max(...runs.map((r) => r.stats.connections))
  details.throughputMs = runs.map((r) => r.ms)

  // The floor: the same calls from a bare undici loop (16 at a time, no parsing, nothing written).
  await fake.setScript({}, { kind: "ok", delayMs: 50, content: SHORT_ANSWER })
  const agent = new Undici.Agent()
  const target = new URL(`${fake.url}/chat/completions`)
  const body = JSON.stringify({ model: "bench/raw", messages: [{ role: "user", content: "floor" }], stream: true })
  let sent = 0
  const rawStarted = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (sent < calls) {
      sent++
      const response = await agent.request({
        origin: target.origin,
        path: target.pathname,
        method: "POST",
        body,
        headers: { "content-type": "application/json" }
      })
      await response.body.text()
    }
  }))
  figures["throughput.rawUndiciFraction"] = idealMs / (performance.now() - rawStarted)
  await agent.close()

  // The default --runs 4: each run needs at least 50 + 50 ms, so 4 runs in flight make 40 prompts/s at best.
  const small = quick ? 20 : 200
  const byDefault = await batchOnce(fake, small, [], "default --runs")
  figures["throughput.defaultRunsFraction"] = ((small / 4) * 100) / byDefault.ms
}

const measureStartup = async (fake: Fake) => {
  const times = quick ? 3 : 11
  figures["startup.nodeBaselineMs"] = await repeat(times, () =>
    new Promise((resolve, reject) => {
      const started = performance.now()
      const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" })
      child.on("error", reject)
      child.on("exit", () => resolve(performance.now() - started))
    }))
  // The first run after an install has no code cache yet (it makes one in the user's cache directory).
  fs.rmSync(path.join(tmp, ".cache"), { recursive: true, force: true })
  figures["startup.serveInitColdMs"] = await serveInit(fake)
  figures["startup.serveInitMs"] = await repeat(times, () => serveInit(fake))
  figures["startup.versionMs"] = await repeat(times, async () => (await spawnCli(["--version"], {})).ms)
  figures["startup.askHelpMs"] = await repeat(times, async () => (await spawnCli(["ask", "--help"], {})).ms)
}

/** Spawn `serve`, send `initialize`, time to its answer (the first line on stdout). */
const serveInit = (fake: Fake): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [cliEntry, "serve"], {
      env: { PATH: process.env.PATH ?? "", HOME: tmp, ...cliEnv(fake, path.join(tmp, "serve-runs")) },
      stdio: ["pipe", "pipe", "ignore"]
    })
    child.on("error", reject)
    child.stdin.write(
      `${
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } }
        })
      }\n`
    )
    let out = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      if (!out.includes("\n")) return
      const ms = performance.now() - started
      const answer: unknown = JSON.parse(out.slice(0, out.indexOf("\n")))
      child.on("exit", () =>
        typeof answer === "object" && answer !== null && "result" in answer
          ? resolve(ms)
          : reject(new Error(`serve answered: ${out}`)))
      child.stdin.end()
    })
    child.on("exit", (code) => {
      if (!out.includes("\n")) reject(new Error(`serve exited ${code} before answering`))
    })
  })

interface OriginalRun {
  readonly name: string
  readonly candidates: Readonly<Record<string, number | null>>
  readonly synthesis: number | null
}

const measureTail = async (fake: Fake) => {
  const data = JSON.parse(fs.readFileSync(path.join(root, "bench", "data", "original-latencies.json"), "utf8")) as {
    runs: ReadonlyArray<OriginalRun>
  }
  const settings = await settingsFor(fake)
  for (const name of ["C", "B"]) {
    const run = data.runs.find((r) => r.name === name)!
    const models = Object.keys(run.candidates)
    const synth = "tail/synthesizer"
    // Seconds in the original become tens of milliseconds here: 100× faster.
    await fake.setScript({
      ...Object.fromEntries(
        models.map((
          m
        ) => [m, { kind: "ok", delayMs: Math.round((run.candidates[m] ?? 0) * 10), content: answerText(m) } satisfies Behavior])
      ),
      [synth]: { kind: "ok", delayMs: Math.round((run.synthesis ?? 0) * 10), content: answerText(synth) }
    })
    const runtime = makeRuntime(settings)
    const base = { prompt: `Tail latency, run ${name}`, models, synthesizer: synth }
    await timedRun(runtime, base)
    const policies = {
      waitAll: base,
      quorum: { ...base, quorum: 3, graceMs: 100 },
      deadline: { ...base, deadlineMs: 550 }
    } satisfies Record<string, RunRequest>
    for (const [policy, request] of Object.entries(policies)) {
      const results: Array<Awaited<ReturnType<typeof timedRun>>> = []
      for (let i = 0; i < (quick ? 1 : 5); i++) results.push(await timedRun(runtime, request))
      figures[`tail.${name}.${policy}Ms`] = median(results.map((r) => r.ms))
      const answered = median(results.map((r) => r.manifest.candidates.filter((c) => c.status === "ok").length))
      if (policy !== "waitAll") figures[`tail.${name}.${policy}Answered`] = answered
      details[`tail.${name}.${policy}`] = { status: results.map((r) => r.manifest.status), ms: results.map((r) => Math.round(r.ms)) }
    }
    await runtime.dispose()
  }
}

// --- Main ---

const printTable = () => {
  const rows = FIGURES.map((spec) => {
    const value = figures[spec.key]
    const text = value === undefined ? "—" : Number.isInteger(value) ? String(value) : value < 10 ? value.toFixed(3) : value.toFixed(0)
    const target = spec.target === undefined
      ? ""
      : `${spec.target.max !== undefined ? `≤ ${spec.target.max}` : `≥ ${spec.target.min}`} ${
        value === undefined ? "" : meetsTarget(spec, value) ? "met" : "MISSED"
      }`
    return [spec.label, `${text} ${spec.unit}`.trim(), target]
  })
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length), 6))
  const header = ["figure", "value", "target"]
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd()
  process.stdout.write([line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n") + "\n")
  printTargets()
}

/** Issue 16's targets: the project beside the bare-Node floor measured in the same run, and their ratio. */
const printTargets = () => {
  const number = (value: number | undefined) => (value === undefined ? "—" : value < 10 ? value.toFixed(2) : value.toFixed(0))
  const rows = TARGETS.flatMap((t) => {
    const project = figures[`${t.key}.project`]
    if (project === undefined) return []
    const floor = figures[`${t.key}.floor`]
    const ratio = figures[`${t.key}.ratio`]
    const judged = t.goal.ratio !== undefined ? ratio : project
    const limit = t.goal.ratio ?? t.goal.max
    const met = judged === undefined || limit === undefined ? "" : judged <= limit ? "met" : "MISSED"
    return [[
      t.label,
      `${number(project)} ${t.unit}`,
      `${number(floor)} ${t.unit}`,
      ratio === undefined ? "—" : `${ratio.toFixed(2)}×`,
      t.goal.text,
      met
    ]]
  })
  if (rows.length === 0) return
  const all = [["target", "project", "floor", "ratio", "goal", ""], ...rows]
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(...all.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i >= 1 && i <= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd()
  process.stdout.write(["", line(all[0]!), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n") + "\n")
}

const main = async () => {
  if (!fs.existsSync(cliEntry)) throw new Error(`${cliEntry} is missing: run npm run build first`)
  const fake = await startFake()
  const started = performance.now()
  // BENCH_ONLY=overhead,throughput runs only those measurements (while working on one figure).
  const only = process.env.BENCH_ONLY?.split(",").map((name) => name.trim())
  try {
    for (
      const [name, measure] of [
        ["start-up", measureStartup],
        ["overhead", measureOverhead],
        ["connections", measureConnections],
        ["tail", measureTail],
        ["throughput", measureThroughput],
        ["calls", () => measureCallCpu(targetContext)],
        ["events", () => measureEventCpu(targetContext)],
        ["scale", () => measureScale(targetContext)]
      ] as const
    ) {
      // The scale run is heavy (two ~20 s batches of 1,000 streams): only when asked for.
      if (only === undefined ? name === "scale" && process.env.BENCH_SCALE !== "1" : !only.includes(name)) continue
      log(`${name}…`)
      await measure(fake)
    }
  } finally {
    await fake.close()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
  printTable()
  const report = {
    generatedAt: new Date().toISOString(),
    mode: quick ? "quick" : "full",
    machine: { node: process.version, platform: process.platform, cpus: os.cpus().length, loadAverage: os.loadavg() },
    durationMs: Math.round(performance.now() - started),
    figures,
    details
  }
  fs.mkdirSync(path.dirname(outFile), { recursive: true })
  fs.writeFileSync(outFile, `${JSON.stringify(report, null, 2)}\n`)
  log(`figures written to ${path.relative(root, outFile) || outFile}`)
}

await main()
