/**
 * Tail latency: two runs of the original tool (bench/data/original-latencies.json) replayed on the fake,
 * scaled down, under each policy — wait for all, a quorum with grace, a deadline.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { RunRequest } from "../../src/programs/run/request.js"
import type { Behavior } from "../../test/support/fakeOpenRouter.js"
import { type BenchContext, median } from "../context.js"
import type { Fake } from "../fake.js"
import { answerText, makeRuntime, settingsFor, timedRun } from "../workload.js"

interface OriginalRun {
  readonly name: string
  readonly candidates: Readonly<Record<string, number | null>>
  readonly synthesis: number | null
}

export const measureTail = async (ctx: BenchContext, fake: Fake) => {
  const { details, figures } = ctx
  const data = JSON.parse(fs.readFileSync(path.join(ctx.root, "bench", "data", "original-latencies.json"), "utf8")) as {
    runs: ReadonlyArray<OriginalRun>
  }
  const settings = await settingsFor(ctx, fake)
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
      for (let i = 0; i < (ctx.quick ? 1 : 5); i++) results.push(await timedRun(runtime, request))
      figures[`tail.${name}.${policy}Ms`] = median(results.map((r) => r.ms))
      const answered = median(results.map((r) => r.manifest.candidates.filter((c) => c.status === "ok").length))
      if (policy !== "waitAll") figures[`tail.${name}.${policy}Answered`] = answered
      details[`tail.${name}.${policy}`] = { status: results.map((r) => r.manifest.status), ms: results.map((r) => Math.round(r.ms)) }
    }
    await runtime.dispose()
  }
}
