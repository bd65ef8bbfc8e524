import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { startRun } from "../../src/programs/run/start.js"
import { KnownStrategyRecord, strategyNames } from "../../src/programs/strategies/registry.js"
import { Settings } from "../../src/services/settings.js"
import { dedupe, DedupeRecord } from "../support/dedupeStrategy.js"
import { itLive } from "../support/itLive.js"
import { makeScriptedClient } from "../support/scriptedClient.js"
import { makeTestRunStore } from "../support/testRunStore.js"
import { makeTestSettings } from "../support/testSettings.js"

// docs/extending.md adds a strategy, `dedupe`, in one new file plus one registry line. That file is kept here
// (test/support/dedupeStrategy.ts, type-checked with the tests), the doc's text is held to it, and it is run
// as the registry would run it. And the registry stays the one list: no layer below it names a strategy.

const doc = fs.readFileSync("docs/extending.md", "utf8")

/** The doc's example file, its imports as they read from src/programs/strategies/. */
const exampleInDoc = (): string | undefined => {
  const block = /1\. `src\/programs\/strategies\/dedupe\.ts`, the new file:\n\s*```ts\n([\s\S]*?)\n\s*```/.exec(doc)?.[1]
  return block?.split("\n").map((line) => line.replace(/^ {3}/, "")).join("\n")
}

describe("the worked example of docs/extending.md, a strategy in one file plus one registry line", () => {
  it("is the doc's text, word for word (its imports aside)", () => {
    const fixture = fs.readFileSync("test/support/dedupeStrategy.ts", "utf8").replaceAll("../../src/programs/strategies/", "./")
    expect(exampleInDoc()).toBe(fixture.trimEnd())
    expect(doc).toContain("3. Its line in `src/programs/strategies/registry.ts` (and its import): `dedupe,`.")
  })

  it("declares its own record, which joins the registry's union told apart by name", () => {
    const union = Schema.Union(KnownStrategyRecord, DedupeRecord)
    expect(Schema.decodeUnknownSync(union)({ name: "dedupe", dropped: ["test/beta"] })).toEqual({ name: "dedupe", dropped: ["test/beta"] })
    expect(() => Schema.decodeUnknownSync(DedupeRecord)({ name: "rank" })).toThrow()
    expect(dedupe.record(dedupe.plan({ settings: makeTestSettings(), models: ["test/alpha"] }))).toEqual({ name: "dedupe" })
  })

  itLive.effect("drops an answer that says what an earlier one did, and records which, in a started run", () =>
    Effect.gen(function*() {
      const started = yield* startRun({ prompt: "What is 2+2?" }, yield* Effect.scope)
      yield* Ref.update(started.state, (s) => ({ ...s, strategy: dedupe.record({ candidates: [], steps: { models: [], rounds: 0 } }) }))
      const answer = (index: number, model: string, content: string) => ({
        index,
        model,
        content,
        record: { model, status: "ok" as const, attempts: 1 }
      })
      const aggregated = yield* dedupe.aggregate(started, [
        answer(0, "test/alpha", "It is 4."),
        answer(1, "test/beta", "it is   4."),
        answer(2, "test/gamma", "Four.")
      ])
      expect(aggregated.answers.map((a) => a.model)).toEqual(["test/alpha", "test/gamma"])
      expect((yield* Ref.get(started.state)).strategy).toEqual({ name: "dedupe", dropped: ["test/beta"] })
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.unwrapEffect(Effect.map(makeScriptedClient({}), (client) =>
        Layer.mergeAll(client.layer, makeTestRunStore().layer, Settings.Test(makeTestSettings({ models: ["test/alpha"] }))))))
    ))
})

describe("the registry, the one list of strategies", () => {
  const below = ["src/domain", "src/settings", "src/services"].flatMap((dir) =>
    fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) => path.join(dir, f))
  )

  it("is named by no module below the programs (but for the default, `synthesize`)", () => {
    const named = below.flatMap((file) => {
      const text = fs.readFileSync(file, "utf8")
      return strategyNames.filter((name) => name !== "synthesize" && text.includes(JSON.stringify(name))).map((name) => `${file}: ${name}`)
    })
    expect(below.length).toBeGreaterThan(20)
    expect(named).toEqual([])
  })
})
