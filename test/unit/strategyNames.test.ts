import { describe, expect } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { Settings } from "../../src/services/settings.js"
import { cliEffect } from "../support/inProcessCli.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"

// The settings take a strategy as a name (they sit below the registry, src/programs/strategies/registry.ts);
// the registry's names are checked where the settings are read, naming where the wrong one was written, and
// again where a run is planned. Either way before any call.

const { root: tmp } = tempRoot("pllm-strategy-names-")
const KNOWN = "(known: synthesize, rank, refine, self)"

const env = {
  PATH: process.env.PATH,
  HOME: tmp,
  OPENROUTER_BASE_URL: "http://127.0.0.1:9/v1",
  PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, "runs"),
  PARALLEL_LLM_MODELS: "test/alpha,test/beta",
  PARALLEL_LLM_SYNTHESIZER: "test/synth"
}

const configFile = (name: string, config: unknown) => {
  const file = path.join(tmp, `${name}.json`)
  fs.writeFileSync(file, JSON.stringify(config))
  return file
}

/** `ask` with a scripted client: what it printed, and which models it asked. */
const ask = (args: ReadonlyArray<string>, extraEnv: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const client = yield* makeScriptedClient({})
    const store = makeTestRunStore()
    const result = yield* cliEffect(["ask", "What is 2+2?", ...args], {
      env: { ...env, ...extraEnv },
      overrides: Layer.merge(client.layer, store.layer),
      timeoutMs: 30_000
    })
    return { ...result, asked: (yield* Ref.get(client.requests)).map((r) => r.model) }
  })

describe("a strategy's name that no strategy has", () => {
  itLive.effect(
    "is refused where the settings are read, naming the flag, variable, key or preset it was written in",
    () =>
      Effect.gen(function*() {
        const file = configFile("vote", { strategy: "vote" })
        const preset = configFile("preset", { presets: { voting: { strategy: "vote" } } })
        const cases: ReadonlyArray<readonly [ReadonlyArray<string>, Readonly<Record<string, string>>, string]> = [
          [["--strategy", " vote "], {}, "--strategy"],
          [[], { PARALLEL_LLM_STRATEGY: "vote" }, "PARALLEL_LLM_STRATEGY"],
          [["--config", file], {}, `strategy (in ${file})`],
          [["--config", preset, "--preset", "voting"], {}, `presets.voting.strategy (in ${preset})`]
        ]
        for (const [args, extraEnv, where] of cases) {
          const r = yield* ask(args, extraEnv)
          expect(r.stderr, where).toBe(`parallel-llm: ${where}: unknown strategy "vote" ${KNOWN}\n`)
          expect(r.code).toBe(2)
          expect(r.asked).toEqual([])
        }
        // A known name, trimmed, is taken.
        const ok = yield* ask(["--strategy", " rank "])
        expect(ok.code, ok.stderr).toBe(0)
        expect(ok.asked.length).toBeGreaterThan(3)
      })
  )

  itLive.effect(
    "is refused where a run is planned, whatever it came from (settings made otherwise, a call's preset)",
    () =>
      Effect.gen(function*() {
        const run = (settings: Parameters<typeof makeTestSettings>[0]) =>
          Effect.gen(function*() {
            const client = yield* makeScriptedClient({})
            const refused = yield* runPipeline({ prompt: "p" }).pipe(
              withCallSettings({ preset: "voting" }),
              Effect.provide(Layer.mergeAll(client.layer, makeTestRunStore().layer, Settings.Test(makeTestSettings(settings)))),
              Effect.flip
            )
            return { message: refused.message, asked: yield* Ref.get(client.requests) }
          })
        const viaPreset = yield* run({ presets: { voting: { strategy: "vote" } } })
        expect(viaPreset).toEqual({ message: `strategy: unknown strategy "vote" ${KNOWN}`, asked: [] })
      })
  )
})
