/**
 * The targets of issue 16, each measured side by side with the bare-Node floor (bench/floor.mjs) against
 * the token server (bench/tokenServer.mjs), both in processes of their own: CPU and peak RSS come from
 * /usr/bin/time, so the two sides are measured the same way. Which side runs first alternates from one
 * pair to the next (see `pair`); the figures are medians, with the spread of the ratio in the details.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { type BenchContext, median } from "../context.js"

interface Measured {
  readonly wallMs: number
  readonly cpuMs: number
  /** Of cpuMs, the process's own (user) time: the system time of its file and socket calls moves with the VM's state. */
  readonly userMs: number
  readonly peakRssMb: number
}

/** Starts the token server in its own process; resolves with its base URL and a way to stop it. */
const startTokenServer = (ctx: BenchContext, options: { events: number; intervalMs: number; delayMs: number }) =>
  new Promise<{ url: string; stop: () => Promise<void> }>((resolve, reject) => {
    const child = spawn(process.execPath, [
      path.join(ctx.root, "bench", "tokenServer.mjs"),
      `--events=${options.events}`,
      `--interval=${options.intervalMs}`,
      `--delay=${options.delayMs}`
    ], { stdio: ["ignore", "pipe", "inherit"] })
    child.on("error", reject)
    child.stdout.setEncoding("utf8").once("data", (line: string) =>
      resolve({
        url: line.trim(),
        stop: () =>
          new Promise<void>((done) => (child.exitCode !== null ? done() : (child.once("exit", () => done()), child.kill("SIGTERM"))))
      }))
  })

/** Runs `node args` under /usr/bin/time: wall, user + system CPU, peak RSS of that process alone. */
const timed = (
  ctx: BenchContext,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): Promise<Measured & { code: number | null; stderr: string }> =>
  new Promise((resolve, reject) => {
    const report = path.join(ctx.tmp, `time-${process.hrtime.bigint()}.txt`)
    const child: ChildProcess = spawn("/usr/bin/time", ["-f", "%e %U %S %M", "-o", report, process.execPath, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: ctx.tmp, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr?.setEncoding("utf8").on("data", (piece: string) => (stderr = (stderr + piece).slice(-4000)))
    child.on("error", reject)
    child.on("exit", (code) => {
      const [wall, user, system, rssKb] = fs.readFileSync(report, "utf8").trim().split("\n").at(-1)!.split(" ").map(Number)
      resolve({ code, stderr, wallMs: wall! * 1000, cpuMs: (user! + system!) * 1000, userMs: user! * 1000, peakRssMb: rssKb! / 1024 })
    })
  })

const CANDIDATES = ["t/c1", "t/c2", "t/c3", "t/c4", "t/c5"]
const SYNTH = "t/synth"

interface BatchShape {
  readonly prompts: number
  readonly concurrency: number
  readonly runs: number
}

/** `batch`'s arguments after its input file: the candidates, the synthesizer and the shape. */
const batchArgs = (shape: BatchShape): Array<string> => [
  ...CANDIDATES.flatMap((m) => ["-m", m]),
  "-s",
  SYNTH,
  "--concurrency",
  String(shape.concurrency),
  "--runs",
  String(shape.runs)
]

const batchEnv = (url: string, dir: string): Record<string, string> => ({
  OPENROUTER_BASE_URL: url,
  PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs"),
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  PARALLEL_LLM_LOG_LEVEL: "warning"
})

/** bench/floor.mjs's arguments for the same batch. */
const floorArgs = (url: string, input: string, out: string, shape: BatchShape): Array<string> => [
  "--url",
  url,
  "--input",
  input,
  "--out",
  out,
  "--models",
  CANDIDATES.join(","),
  "--synth",
  SYNTH,
  "--concurrency",
  String(shape.concurrency),
  "--runs",
  String(shape.runs)
]

/**
 * One batch through the built CLI and the same through the floor, against `url`; every answer checked.
 * `floorFirst` runs the floor before the project: back to back, the second of two batches was seen to use
 * ~7 % more CPU in 7 rounds of 10 whichever build it was (bench/README.md), so a fixed order would bias
 * every ratio the same way. The measurements alternate it, pair by pair.
 */
const pair = async (ctx: BenchContext, url: string, shape: BatchShape, label: string, floorFirst = false) => {
  const dir = fs.mkdtempSync(path.join(ctx.cpuTmp, `${label}-`))
  const input = path.join(dir, "prompts.jsonl")
  fs.writeFileSync(
    input,
    Array.from({ length: shape.prompts }, (_, i) => JSON.stringify({ prompt: `Question ${i + 1}?` })).join("\n") + "\n"
  )
  const runProject = () => timed(ctx, [ctx.cliEntry, "batch", input, ...batchArgs(shape)], batchEnv(url, dir))
  const floorOut = path.join(dir, "floor")
  const runFloor = () => {
    fs.mkdirSync(floorOut)
    return timed(ctx, [path.join(ctx.root, "bench", "floor.mjs"), ...floorArgs(url, input, floorOut, shape)])
  }
  const first = await (floorFirst ? runFloor() : runProject())
  await sleep(200)
  const second = await (floorFirst ? runProject() : runFloor())
  const [project, floor] = floorFirst ? [second, first] : [first, second]
  const ok =
    fs.readFileSync(path.join(dir, "prompts.results.jsonl"), "utf8").trim().split("\n").filter((l) => JSON.parse(l).status === "ok").length
  if (project.code !== 0 || ok !== shape.prompts) {
    throw new Error(`${label}: batch exited ${project.code} with ${ok}/${shape.prompts} ok: ${project.stderr}`)
  }
  const floorOk = fs.readFileSync(path.join(floorOut, "results.jsonl"), "utf8").trim().split("\n").length
  if (floor.code !== 0 || floorOk !== shape.prompts) {
    throw new Error(`${label}: floor exited ${floor.code} with ${floorOk}/${shape.prompts}: ${floor.stderr}`)
  }
  fs.rmSync(dir, { recursive: true, force: true })
  return { project, floor }
}

interface Pair {
  readonly project: Measured
  readonly floor: Measured
}

const record = (ctx: BenchContext, key: string, pairs: ReadonlyArray<Pair>, pick: (m: Measured) => number, per = 1) => {
  const project = median(pairs.map((p) => pick(p.project))) / per
  const floor = median(pairs.map((p) => pick(p.floor))) / per
  const ratios = pairs.map((p) => pick(p.project) / pick(p.floor))
  ctx.figures[`${key}.project`] = project
  ctx.figures[`${key}.floor`] = floor
  ctx.figures[`${key}.ratio`] = median(ratios)
  ctx.details[key] = {
    ratios: ratios.map((r) => Number(r.toFixed(3))),
    project: pairs.map((p) => p.project),
    floor: pairs.map((p) => p.floor)
  }
}

/** What `x` measured beyond `y` (CPU and wall; the peak RSS is `x`'s). */
const difference = (x: Measured, y: Measured): Measured => ({
  wallMs: x.wallMs - y.wallMs,
  cpuMs: x.cpuMs - y.cpuMs,
  userMs: x.userMs - y.userMs,
  peakRssMb: x.peakRssMb
})

/** Target 1: CPU per call, 200 prompts × 6 calls of short answers at 50 ms, 50 calls in flight. */
export const measureCallCpu = async (ctx: BenchContext) => {
  const server = await startTokenServer(ctx, { events: 20, intervalMs: 0, delayMs: 50 })
  const shape = { prompts: ctx.quick ? 20 : 200, concurrency: 50, runs: 10 }
  // The CLI's first batch makes its V8 code cache (the batches' HOME is the bench's own, new at every run): ~0.4 s of
  // CPU, ~8 % of a batch, that every later batch is spared, and which fell on the first pair (bench/README.md, the
  // thirteenth session). One short batch a side first, not measured: the pairs are batches as a user runs them after
  // the first; the start-up rows measure the run without a cache.
  await pair(ctx, server.url, { ...shape, prompts: 20 }, "calls-warm-up")
  const pairs: Array<Pair> = []
  // Six pairs, so that each side runs first in three of them: with four, one run's median moved by ~0.1 from the
  // next's for the same build (bench/README.md, the thirteenth session).
  for (let i = 0; i < (ctx.quick ? 1 : 6); i++) {
    pairs.push(await pair(ctx, server.url, shape, "calls", i % 2 === 1))
    const { project, floor } = pairs.at(-1)!
    ctx.log(
      `calls ${i + 1}: project ${Math.round(project.cpuMs)} ms CPU (${Math.round(project.userMs)} user), floor ${
        Math.round(floor.cpuMs)
      } ms (${Math.round(floor.userMs)} user)`
    )
  }
  // Beside it, the same batch twice as long: the difference is what a call costs once the process is warm (its
  // start-up and V8's compiling of the hot path cancel out), in pairs of the two lengths run one after the other.
  const margins: Array<Pair> = []
  for (let i = 0; i < (ctx.quick ? 0 : 3); i++) {
    const long = await pair(ctx, server.url, { ...shape, prompts: shape.prompts * 2 }, "calls-long", i % 2 === 1)
    const short = await pair(ctx, server.url, shape, "calls-short", i % 2 === 1)
    margins.push({ project: difference(long.project, short.project), floor: difference(long.floor, short.floor) })
  }
  await server.stop()
  const calls = shape.prompts * 6
  record(ctx, "targets.callCpu", pairs, (m) => m.cpuMs, calls / 1000)
  // Beside the target (user + system, as a user pays it): user time alone, which the kernel's state does not move.
  record(ctx, "targets.callUserCpu", pairs, (m) => m.userMs, calls / 1000)
  if (margins.length > 0) record(ctx, "targets.callMarginCpu", margins, (m) => m.cpuMs, calls / 1000)
  record(ctx, "targets.batchRss", pairs, (m) => m.peakRssMb)
}

/**
 * Target 2: CPU per SSE event on token streams (1,500 events per answer, one per socket write): the
 * same batch with 1,500 and with 1 event per answer, so that start-up and per-call work cancel out.
 */
export const measureEventCpu = async (ctx: BenchContext) => {
  const events = 1500
  const shape = { prompts: ctx.quick ? 2 : 10, concurrency: 10, runs: 2 }
  const long = await startTokenServer(ctx, { events, intervalMs: 0, delayMs: 0 })
  const short = await startTokenServer(ctx, { events: 1, intervalMs: 0, delayMs: 0 })
  const pairs: Array<Pair> = []
  // Five pairs of differences: with three, one run's median ratio was 0.81 and another's 1.35 for the same build.
  for (let i = 0; i < (ctx.quick ? 1 : 5); i++) {
    const a = await pair(ctx, long.url, shape, "events", i % 2 === 1)
    const b = await pair(ctx, short.url, shape, "events-base", i % 2 === 1)
    pairs.push({ project: difference(a.project, b.project), floor: difference(a.floor, b.floor) })
    ctx.log(
      `events ${i + 1}: project +${Math.round(pairs.at(-1)!.project.cpuMs)} ms CPU, floor +${Math.round(pairs.at(-1)!.floor.cpuMs)} ms`
    )
  }
  await long.stop()
  await short.stop()
  // µs per event
  record(ctx, "targets.eventCpu", pairs, (m) => m.cpuMs, (shape.prompts * 6 * (events - 1)) / 1000)
}

/** Target 4: 1,000 streamed calls at once, ~30 events/s for ~10 s each, against a server in another process. */
export const measureScale = async (ctx: BenchContext) => {
  const server = await startTokenServer(ctx, { events: ctx.quick ? 30 : 300, intervalMs: 33, delayMs: 0 })
  const shape = { prompts: 200, concurrency: 1000, runs: 200 }
  const pairs: Array<Pair> = []
  for (let i = 0; i < (ctx.quick ? 1 : 2); i++) {
    pairs.push(await pair(ctx, server.url, shape, "scale", i % 2 === 1))
    const last = pairs.at(-1)!
    ctx.log(
      `scale ${i + 1}: project ${Math.round(last.project.cpuMs)} ms CPU ${Math.round(last.project.wallMs)} ms wall, floor ${
        Math.round(last.floor.cpuMs)
      } / ${Math.round(last.floor.wallMs)}`
    )
  }
  await server.stop()
  record(ctx, "targets.scaleCpu", pairs, (m) => m.cpuMs)
  record(ctx, "targets.scaleWall", pairs, (m) => m.wallMs)
  record(ctx, "targets.scaleRss", pairs, (m) => m.peakRssMb)
}
