import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import type { FakeOpenRouter } from "./fakeOpenRouter.js"
import { type OtlpReceiver, startOtlpReceiver } from "./otlpReceiver.js"
import { freshDirs } from "./spawnCli.js"
import { useFakeOpenRouter } from "./useFakeOpenRouter.js"

// What the OpenTelemetry tests share (test/unit/otelExport.test.ts in-process, test/e2e/otel.test.ts where a process
// is the point): a loopback provider whose candidates rank and whose synthesizer answers, a loopback OTLP/HTTP
// receiver, and the environment of a run exporting to it. Nothing of src/ here: the e2e workers load none of it.

export const PROMPT = "What is the secret number nine plus nine?"
const ANSWER = "It is 18.\nRANKING: B > A"
const USAGE = { prompt_tokens: 11, completion_tokens: 7, cost: 0.0001 }
export const SYNTH = { kind: "ok", content: "#### 18", usage: USAGE } as const

export interface OtelFixture {
  readonly fake: FakeOpenRouter
  readonly receiver: OtlpReceiver
  /** A new directory under the file's scratch directory. */
  readonly freshDir: (name: string) => string
  /** The environment of a run writing into `outputDir` (no exporter unless `extra` sets one). */
  readonly envFor: (outputDir: string, extra?: Record<string, string>) => Record<string, string | undefined>
}

/** Starts the provider and the receiver before the file's tests and stops them after; read them in the tests. */
export const useOtelFixture = (prefix: string): OtelFixture => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const provider = useFakeOpenRouter({ default: { kind: "ok", content: ANSWER, usage: USAGE }, script: { "ot/synth": SYNTH } })
  let receiver: OtlpReceiver | undefined
  beforeAll(async () => {
    receiver = await startOtlpReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    fs.rmSync(tmp, { recursive: true, force: true })
  })
  return {
    get fake() {
      return provider.fake
    },
    get receiver() {
      if (receiver === undefined) throw new Error("the OTLP receiver starts before the tests: read it inside a test or hook")
      return receiver
    },
    freshDir: freshDirs(tmp),
    envFor: (outputDir, extra = {}) => ({
      PATH: process.env.PATH,
      HOME: tmp,
      OPENROUTER_BASE_URL: provider.url,
      PARALLEL_LLM_OUTPUT_DIR: outputDir,
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
      PARALLEL_LLM_RETRY_BASE_DELAY: "0.01",
      ...extra
    })
  }
}
