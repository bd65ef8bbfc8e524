/**
 * The in-process workload: scripted candidates and synthesizer on the fake, the settings and the services
 * as `main.ts` composes them, and one timed run of the pipeline.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as path from "node:path"
import { withCallSettings } from "../src/programs/callSettings.js"
import type { RunRequest } from "../src/programs/run/request.js"
import { runPipeline } from "../src/programs/runPipeline.js"
import { Logging } from "../src/services/logging.js"
import { ModelClient } from "../src/services/modelClient.js"
import { RunStore } from "../src/services/runStore.js"
import { Settings } from "../src/services/settings.js"
import { loadSettings } from "../src/settings/load.js"
import type { PerCallValues } from "../src/settings/perCall.js"
import type { RawSettings, SettingsValue } from "../src/settings/values.js"
import type { Behavior, Script } from "../test/support/fakeOpenRouter.js"
import { realHttpClientLayer } from "../test/support/realHttpClient.js"
import type { BenchContext } from "./context.js"
import type { Fake } from "./fake.js"

/** A paragraph-long answer, streamed as one SSE event per word by the fake. */
export const answerText = (model: string) =>
  `${model} answers: ` +
  "the question has a short answer and a longer explanation, which this paragraph stands in for. ".repeat(6) +
  "In short: it depends on the constraints, and the trade-offs are listed above."

export const CANDIDATES = ["bench/c1", "bench/c2", "bench/c3", "bench/c4", "bench/c5"]
export const SYNTH = "bench/synth"
const CANDIDATE_MS = [100, 125, 150, 175, 200]
const SYNTH_MS = 100
/** The slowest candidate, then the synthesis: a run can take no less. */
export const IDEAL_MS = Math.max(...CANDIDATE_MS) + SYNTH_MS

export const overheadScript = (): Script => ({
  ...Object.fromEntries(
    CANDIDATES.map((m, i) => [m, { kind: "ok", delayMs: CANDIDATE_MS[i]!, content: answerText(m) } satisfies Behavior])
  ),
  [SYNTH]: { kind: "ok", delayMs: SYNTH_MS, content: answerText(SYNTH) }
})

export const settingsFor = (ctx: BenchContext, fake: Fake, extra: RawSettings = {}): Promise<SettingsValue> =>
  Effect.runPromise(
    loadSettings({
      flags: {
        baseUrl: fake.url,
        models: CANDIDATES.join(","),
        synthesizer: SYNTH,
        fallbackSynthesizers: "none",
        outputDir: path.join(ctx.tmp, "runs"),
        ...extra
      },
      env: {}
    }).pipe(Effect.map((loaded) => loaded.settings), Effect.provide(NodeFileSystem.layer))
  )

/** The services as `main.ts` composes them (pooled undici client, run store on disk, logger writing nowhere). */
export const makeRuntime = (settings: SettingsValue) =>
  ManagedRuntime.make(
    Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
      Layer.provideMerge(Settings.Test(settings)),
      Layer.provide(Layer.mergeAll(realHttpClientLayer, NodeFileSystem.layer, NodePath.layer)),
      Layer.merge(Logging.Test(settings, [], () => undefined))
    )
  )

type Runtime = ReturnType<typeof makeRuntime>

/** One run of `request`, with a call's own settings (`call`) over the runtime's. */
export const timedRun = async (runtime: Runtime, request: RunRequest, call: PerCallValues = {}) => {
  const started = performance.now()
  const result = await runtime.runPromise(runPipeline(request).pipe(withCallSettings(call)))
  return { ms: performance.now() - started, manifest: result.manifest }
}
