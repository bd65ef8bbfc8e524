import type { FileSystem } from "@effect/platform"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Layer, Logger } from "effect"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { type FakeOpenRouter, type FakeOpenRouterOptions, type RecordedRequest, startFakeOpenRouter } from "./fakeOpenRouter.js"
import { realHttpClientLayer } from "./realHttpClient.js"
import { makeTestSettings } from "./testSettings.js"

// The one way a test runs the real call path against the loopback fake provider: the real HTTP client over
// loopback, the real run store on disk, test settings pointed at the fake. One fake per test file (or describe
// block), started before its tests and closed after them.

export interface ProviderLayerOptions {
  /** Every log line is pushed here (default: logs are dropped). */
  readonly logs?: Array<string>
  /** The file system the run store writes through (default: node's), e.g. one that fails as a full disk does. */
  readonly fileSystem?: Layer.Layer<FileSystem.FileSystem>
}

/** The services of a run over the HTTP provider at `settings.baseUrl`: the model client, the run store, settings, files. */
export const providerLayer = (settings: SettingsValue, options: ProviderLayerOptions = {}) => {
  const { logs } = options
  return Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
    Layer.provideMerge(
      Layer.mergeAll(Settings.Test(settings), realHttpClientLayer, options.fileSystem ?? NodeFileSystem.layer, NodePath.layer)
    ),
    Layer.merge(
      logs === undefined
        ? Logger.remove(Logger.defaultLogger)
        : Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logs.push([message].flat().join(" "))))
    )
  )
}

export interface FakeProvider {
  /** The fake itself: its script, counters and every request it received. */
  readonly fake: FakeOpenRouter
  /** Its base URL (`http://127.0.0.1:PORT/api/v1`). */
  readonly url: string
  /** The chat requests received since it started or was last reset. */
  readonly log: () => ReadonlyArray<RecordedRequest>
  /** Test settings pointed at the fake, with `overrides`. */
  readonly settings: (overrides?: Partial<SettingsValue>) => SettingsValue
  /** {@link providerLayer} over {@link FakeProvider.settings}. */
  readonly layer: (overrides?: Partial<SettingsValue>, options?: ProviderLayerOptions) => ReturnType<typeof providerLayer>
  /**
   * The environment of a command line (`runCliInProcess`, `spawnCli`) pointed at the fake: `dir` as its home, its
   * runs under `dir/runs`, no fallback synthesizer and no retry (a scripted failure stays one).
   */
  readonly cliEnv: (dir: string) => Record<string, string | undefined>
}

/**
 * Starts the fake provider with `script` before the tests of the enclosing file (or `describe`) and closes it after
 * them. Its members are read inside tests and hooks, once it has started.
 */
export const withFakeProvider = (script: FakeOpenRouterOptions = {}): FakeProvider => {
  let started: FakeOpenRouter | undefined
  beforeAll(async () => {
    started = await startFakeOpenRouter(script)
  })
  afterAll(async () => {
    await started?.close()
  })
  const fake = (): FakeOpenRouter => {
    if (started === undefined) throw new Error("the fake provider starts before the tests: read it inside a test or hook")
    return started
  }
  const settings = (overrides: Partial<SettingsValue> = {}) => makeTestSettings({ baseUrl: fake().url, ...overrides })
  return {
    get fake() {
      return fake()
    },
    get url() {
      return fake().url
    },
    log: () => fake().chatRequests(),
    settings,
    layer: (overrides, options) => providerLayer(settings(overrides), options),
    cliEnv: (dir) => ({
      PATH: process.env["PATH"],
      HOME: dir,
      OPENROUTER_BASE_URL: fake().url,
      PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs"),
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
      PARALLEL_LLM_RETRIES: "0"
    })
  }
}
