import * as path from "node:path"
import { afterAll, beforeAll, beforeEach } from "vitest"
import {
  type Behavior,
  type FakeOpenRouter,
  type FakeOpenRouterOptions,
  type RecordedRequest,
  startFakeOpenRouter
} from "./fakeOpenRouter.js"

// The loopback fake provider's life in a test file, and a command line's environment pointed at it. Nothing of src/
// here, so the e2e tier (whose workers load none of the app) uses it as the unit tier does, through withFakeProvider.

export interface FakeOpenRouterInUse {
  /** The fake itself: its script, counters and every request it received. */
  readonly fake: FakeOpenRouter
  /** Its base URL (`http://127.0.0.1:PORT/api/v1`). */
  readonly url: string
  /** The chat requests received since it started or was last reset. */
  readonly log: () => ReadonlyArray<RecordedRequest>
  /**
   * The environment of a command line (`runCliInProcess`, `spawnCli`) pointed at the fake: `dir` as its home, its
   * runs under `dir/runs`, no fallback synthesizer and no retry (a scripted failure stays one).
   */
  readonly cliEnv: (dir: string) => Record<string, string | undefined>
}

/**
 * Starts the fake with `options` before the tests of the enclosing file (or `describe`) and closes it after them. Its
 * members are read inside tests and hooks, once it has started.
 */
export const useFakeOpenRouter = (options: FakeOpenRouterOptions = {}): FakeOpenRouterInUse => {
  let started: FakeOpenRouter | undefined
  beforeAll(async () => {
    started = await startFakeOpenRouter(options)
  })
  afterAll(async () => {
    await started?.close()
  })
  const fake = (): FakeOpenRouter => {
    if (started === undefined) throw new Error("the fake provider starts before the tests: read it inside a test or hook")
    return started
  }
  return {
    get fake() {
      return fake()
    },
    get url() {
      return fake().url
    },
    log: () => fake().chatRequests(),
    cliEnv: (dir) => fakeCliEnv(fake().url, { home: dir, outputDir: path.join(dir, "runs") }, { PARALLEL_LLM_RETRIES: "0" })
  }
}

/** Before each test of the file: the fake forgets its script and the requests it saw, and answers `reply` to any model. */
export const resetFakeBeforeEach = (provider: FakeOpenRouterInUse, reply: Behavior = { kind: "ok" }): void =>
  beforeEach(() => {
    provider.fake.setScript({})
    provider.fake.setDefault(reply)
    provider.fake.reset()
  })

/**
 * A clean environment for a command line (nothing of the test process's but PATH) pointed at the provider at `url`,
 * with `home` as its home, its runs under `outputDir`, and no fallback synthesizer: a test names the one it means.
 * `extra` is added last; `undefined` there removes a variable.
 */
export const fakeCliEnv = <Extra extends Readonly<Record<string, string | undefined>> = Record<never, never>>(
  url: string,
  at: { readonly home: string; readonly outputDir: string },
  extra?: Extra
) => ({
  PATH: process.env["PATH"] ?? "",
  HOME: at.home,
  OPENROUTER_BASE_URL: url,
  PARALLEL_LLM_OUTPUT_DIR: at.outputDir,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
  ...extra
})
