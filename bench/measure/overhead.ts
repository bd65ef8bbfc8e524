/**
 * One run in-process against scripted latencies: its wall time beside the ideal and beside a bare undici
 * client doing the same calls, the same run through the CLI from spawn to exit, and how many connections
 * sequential runs in one process open.
 */
import * as Undici from "@effect/platform-node/Undici"
import * as path from "node:path"
import { type BenchContext, median } from "../context.js"
import type { Fake } from "../fake.js"
import { cliEnv, spawnCli } from "../spawnCli.js"
import { CANDIDATES, IDEAL_MS, makeRuntime, overheadScript, settingsFor, SYNTH, timedRun } from "../workload.js"

export const measureOverhead = async (ctx: BenchContext, fake: Fake) => {
  const { details, figures, quick } = ctx
  await fake.setScript(overheadScript())
  const settings = await settingsFor(ctx, fake)
  const runtime = makeRuntime(settings)
  const request = { prompt: "What are the trade-offs? Answer briefly." }
  await timedRun(runtime, request) // warm-up: JIT, connections
  const times: Array<number> = []
  for (let i = 0; i < (quick ? 3 : 15); i++) {
    const { manifest, ms } = await timedRun(runtime, request)
    if (manifest.status !== "ok") throw new Error(`overhead run ended ${manifest.status}`)
    times.push(ms)
  }
  await runtime.dispose()
  figures["overhead.inProcess.wallMs"] = median(times)
  figures["overhead.inProcess.idealMs"] = IDEAL_MS
  figures["overhead.inProcess.ratio"] = median(times) / IDEAL_MS
  details.overheadInProcessMs = times

  // The physical limit on this machine: the same run (the candidates at once, then the synthesis) from a
  // bare undici client that only reads the bytes. It includes the fake's own time (timer lag, writing one
  // SSE event per word from its worker thread), which no client can avoid.
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

  const env = cliEnv(fake, path.join(ctx.tmp, "cli-runs"))
  const args = ["ask", request.prompt, ...CANDIDATES.flatMap((m) => ["-m", m]), "-s", SYNTH]
  const cliTimes: Array<number> = []
  for (let i = 0; i < (quick ? 2 : 7); i++) {
    const run = await spawnCli(ctx, args, env)
    if (run.code !== 0) throw new Error(`ask exited ${run.code}: ${run.stderr}`)
    cliTimes.push(run.ms)
  }
  figures["overhead.cli.wallMs"] = median(cliTimes)
  figures["overhead.cli.ratio"] = median(cliTimes) / IDEAL_MS
  figures["overhead.cli.floorRatio"] = median(cliTimes) / median(floors)
  details.overheadCliMs = cliTimes
}

/** Sequential runs in one process: the pool keeps its connections, so the fake accepts no more than the bound. */
export const measureConnections = async (ctx: BenchContext, fake: Fake) => {
  await fake.setScript(overheadScript())
  const settings = await settingsFor(ctx, fake)
  const runtime = makeRuntime(settings)
  const runs = ctx.quick ? 5 : 20
  for (let i = 0; i < runs; i++) await timedRun(runtime, { prompt: `sequential run ${i}` })
  const stats = await fake.stats()
  await runtime.dispose()
  ctx.figures["connections.sequentialRuns"] = runs
  ctx.figures["connections.accepted"] = stats.connections
  ctx.figures["connections.bound"] = settings.concurrency
}
