import { describe, expect } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { cliEffect } from "../support/inProcessCli.js"
import { itClock } from "../support/itClock.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { pendingSleeps, runToEnd } from "../support/testClock.js"
import { makeTestRunStore } from "../support/testRunStore.js"

// A command line through the real command tree (runCli) with its services swapped: a scripted model client and
// an in-memory run store, no HTTP and no run directory, and Effect's TestClock for time.

const { root: tmp } = tempRoot("pllm-cli-services-")
const outputDir = path.join(tmp, "runs")
const env = {
  HOME: tmp,
  // A loopback server needs no key; nothing listens there, and the scripted client never calls it.
  OPENROUTER_BASE_URL: "http://127.0.0.1:9/v1",
  PARALLEL_LLM_OUTPUT_DIR: outputDir,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
}

const runDirs = () => (fs.existsSync(outputDir) ? fs.readdirSync(outputDir) : [])

describe("a command line with its services swapped", () => {
  itClock.effect(
    "ask answers through the scripted client into the in-memory store: the answer on stdout, no run directory",
    () =>
      Effect.gen(function*() {
        const client = yield* makeScriptedClient({
          "s/one": [{ answer: "one says 4" }],
          "s/two": [{ answer: "two says four" }],
          "s/synth": [{ answer: "The answer is 4." }]
        })
        const store = makeTestRunStore()
        const r = yield* runToEnd(cliEffect(["ask", "2+2?", "-m", "s/one", "-m", "s/two", "-s", "s/synth"], {
          env,
          overrides: Layer.merge(client.layer, store.layer)
        }))
        expect(r.code, r.stderr).toBe(0)
        expect(r.stdout).toBe("The answer is 4.\n")
        expect(r.stderr).toMatch(/^parallel-llm: ok · 2\/2 answered · .* · \/memory\/run-0001$/m)
        expect((yield* Ref.get(client.requests)).map((q) => q.model).sort()).toEqual(["s/one", "s/synth", "s/two"])
        expect(store.manifests.at(-1)).toMatchObject({ status: "ok" })
        expect(store.files.get("run-0001/final.md")).toBe("The answer is 4.")
        expect(runDirs()).toEqual([])
      })
  )

  itClock.effect(
    "a candidate slower than --timeout is cut on the TestClock, not the wall clock: the run is partial, exit 0",
    () =>
      Effect.gen(function*() {
        const client = yield* makeScriptedClient({
          "t/slow": [{ answer: "too late", delayMs: 3_600_000 }],
          "t/fast": [{ answer: "fast answer" }],
          "t/synth": [{ answer: "merged" }]
        })
        const store = makeTestRunStore()
        const fiber = yield* Effect.fork(
          cliEffect(["ask", "quick?", "-m", "t/slow", "-m", "t/fast", "-s", "t/synth", "--timeout", "0.05", "--retries", "0"], {
            env,
            overrides: Layer.merge(client.layer, store.layer)
          })
        )
        // The fast answer kept and the slow call's 50 ms budget running: only then does the clock reach the budget.
        const fastKept = () => [...store.files.keys()].some((file) => file.endsWith("t-fast.md"))
        yield* pendingSleeps((ahead) => ahead.includes(50) && fastKept())
        yield* TestClock.adjust(50)
        const r = yield* Fiber.join(fiber)
        expect(r.code, r.stderr).toBe(0)
        expect(r.stdout).toBe("merged\n")
        const manifest = store.manifests.at(-1)
        expect(manifest).toMatchObject({ status: "partial" })
        expect(manifest?.candidates.map((c) => [c.model, c.status])).toEqual([["t/slow", "timeout"], ["t/fast", "ok"]])
        expect(runDirs()).toEqual([])
      })
  )
})
