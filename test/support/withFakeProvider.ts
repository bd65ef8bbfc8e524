import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as HttpClient from "@effect/platform/HttpClient"
import { Layer, Logger } from "effect"
import { appLayer } from "../../src/appLayer.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import type { SettingsValue } from "../../src/settings/values.js"
import type { FakeOpenRouterOptions } from "./fakeOpenRouter.js"
import { sharedHttpClientLayer } from "./realHttpClient.js"
import { makeTestSettings } from "./testSettings.js"
import { type FakeOpenRouterInUse, useFakeOpenRouter } from "./useFakeOpenRouter.js"

// The one way a test runs the real call path against the loopback fake provider: the real HTTP client over
// loopback (on the worker's kept Agent: realHttpClient.ts), the real run store on disk, test settings pointed at the fake. One fake per test file (or describe
// block), started before its tests and closed after them.

export interface ProviderLayerOptions {
  /** Every log line is pushed here (default: logs are dropped). */
  readonly logs?: Array<string>
  /** The file system the run store writes through (default: node's), e.g. one that fails as a full disk does. */
  readonly fileSystem?: Layer.Layer<FileSystem.FileSystem>
  /** The model client (default: the HTTP one, over the provider at `settings.baseUrl`), e.g. a scripted one. */
  readonly client?: Layer.Layer<ModelClient, never, Settings | HttpClient.HttpClient>
}

/** The services of a run over the HTTP provider at `settings.baseUrl`: the model client, the run store, settings, files. */
export const providerLayer = (settings: SettingsValue, options: ProviderLayerOptions = {}) => {
  const { logs } = options
  return Layer.mergeAll(options.client ?? ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
    Layer.provideMerge(
      Layer.mergeAll(Settings.Test(settings), sharedHttpClientLayer, options.fileSystem ?? NodeFileSystem.layer, NodePath.layer)
    ),
    Layer.merge(
      logs === undefined
        ? Logger.remove(Logger.defaultLogger)
        : Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logs.push([message].flat().join(" "))))
    )
  )
}

/**
 * The application's whole graph (appLayer.ts, as a command composes it) over test `settings`, on Node's file system
 * and paths, which the command line's entry point provides it.
 */
export const appLayerOver = (settings: SettingsValue) =>
  appLayer(Settings.Test(settings)).pipe(Layer.provide(Layer.merge(NodeFileSystem.layer, NodePath.layer)))

export interface FakeProvider extends FakeOpenRouterInUse {
  /** Test settings pointed at the fake, with `overrides`. */
  readonly settings: (overrides?: Partial<SettingsValue>) => SettingsValue
  /** {@link providerLayer} over {@link FakeProvider.settings}. */
  readonly layer: (overrides?: Partial<SettingsValue>, options?: ProviderLayerOptions) => ReturnType<typeof providerLayer>
}

/**
 * The fake provider of the enclosing file (or `describe`), started before its tests and closed after them
 * (useFakeOpenRouter.ts), with settings and the run's services pointed at it.
 */
export const withFakeProvider = (script: FakeOpenRouterOptions = {}): FakeProvider => {
  const inUse = useFakeOpenRouter(script)
  const settings = (overrides: Partial<SettingsValue> = {}) => makeTestSettings({ baseUrl: inUse.url, ...overrides })
  return {
    get fake() {
      return inUse.fake
    },
    get url() {
      return inUse.url
    },
    log: inUse.log,
    cliEnv: inUse.cliEnv,
    settings,
    layer: (overrides, options) => providerLayer(settings(overrides), options)
  }
}
