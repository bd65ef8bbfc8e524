/**
 * A batch through the CLI at a fixed concurrency: wall time beside the ideal for that bound, peak RSS and
 * CPU of the process, what the fake saw in flight; a bare undici loop doing the same calls; and the same
 * batch with the default --runs.
 */
import * as Undici from "@effect/platform-node/Undici"
import * as fs from "node:fs"
import * as path from "node:path"
import { type BenchContext, median } from "../context.js"
import type { Fake } from "../fake.js"
import { cliEnv, spawnCli } from "../spawnCli.js"
import { CANDIDATES, SYNTH } from "../workload.js"

/**
 * Batch answers are short: with the paragraph-long answers of the other measurements the fake itself
 * becomes the bottleneck, not the pipeline (even a bare undici loop then falls well short of the ideal).
 */
const SHORT_ANSWER = Array.from({ length: 20 }, (_, i) => `word${i + 1}`).join(" ")
const DELAY_MS = 50

const batchOnce = async (ctx: BenchContext, fake: Fake, prompts: number, args: ReadonlyArray<string>, label: string) => {
  await fake.setScript({}, { kind: "ok", delayMs: DELAY_MS, content: SHORT_ANSWER })
  const dir = fs.mkdtempSync(path.join(ctx.tmp, "batch-"))
  const input = path.join(dir, "prompts.jsonl")
  fs.writeFileSync(
    input,
    Array.from({ length: prompts }, (_, i) => JSON.stringify({ prompt: `Question number ${i + 1}?` })).join("\n") + "\n"
  )
  const run = await spawnCli(
    ctx,
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

export const measureThroughput = async (ctx: BenchContext, fake: Fake) => {
  const { figures, quick } = ctx
  const prompts = quick ? 40 : 1000
  const concurrency = 16
  const calls = prompts * (CANDIDATES.length + 1)
  const idealMs = (calls * DELAY_MS) / concurrency
  const runs: Array<Awaited<ReturnType<typeof batchOnce>>> = []
  for (let i = 0; i < (quick ? 1 : 3); i++) {
    runs.push(
      await batchOnce(ctx, fake, prompts, ["--concurrency", String(concurrency), "--runs", String(concurrency)], "--runs 16")
    )
    ctx.log(`batch ${i + 1}: ${Math.round(runs.at(-1)!.ms)} ms`)
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
  ctx.details.throughputMs = runs.map((r) => r.ms)

  // The floor: the same calls from a bare undici loop (as many at a time, no parsing, nothing written).
  await fake.setScript({}, { kind: "ok", delayMs: DELAY_MS, content: SHORT_ANSWER })
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

  // The default --runs 4: each run waits for its candidates, then for the synthesis (two delays in a row),
  // which bounds what 4 runs in flight can do.
  const small = quick ? 20 : 200
  const byDefault = await batchOnce(ctx, fake, small, [], "default --runs")
  figures["throughput.defaultRunsFraction"] = ((small / 4) * 2 * DELAY_MS) / byDefault.ms
}
