import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeEach } from "vitest"
import { BadRequest } from "../../src/domain/errors.js"
import { withCallSettings } from "../../src/programs/callSettings.js"
import { resynthesize } from "../../src/programs/resynthesize.js"
import { runPipeline } from "../../src/programs/runPipeline.js"
import { continueRun } from "../../src/programs/thread/continueRun.js"
import { RunStore } from "../../src/services/runStore.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { failureOf } from "../support/failureOf.js"
import { makeScriptedClient, type ScriptedClient } from "../support/scriptedClient.js"
import { freshDirs } from "../support/spawnCli.js"
import { makeTestSettings } from "../support/testSettings.js"
import { providerLayer } from "../support/withFakeProvider.js"

// Follow-up questions (issue 14, part 6), in process over a scripted model client: what each candidate and the
// synthesizer are sent (the requests' messages; a request's body over HTTP is openAiCompatible.test.ts's), the
// manifest's `parent`, the context budget, and the runs refused.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-followup-"))
const freshDir = freshDirs(tmp)

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})
/** The test's model client: the synthesizer's finals in order (the last repeats), f/broken refused as HTTP 400 is. */
let client: ScriptedClient | undefined
beforeEach(async () => {
  client = await Effect.runPromise(makeScriptedClient({
    "f/synth": ["FINAL ONE", "FINAL TWO", "FINAL THREE", "FINAL FOUR"].map((answer) => ({ answer })),
    "f/broken": [{ fail: new BadRequest({ model: "f/broken", message: "HTTP 400", httpStatus: 400 }) }]
  }))
  mark = 0
})
const current = (): ScriptedClient => {
  if (client === undefined) throw new Error("beforeEach makes the test's client")
  return client
}
const sent = () => Effect.runSync(Ref.get(current().requests))

const layerFor = (overrides: Partial<SettingsValue> = {}) =>
  providerLayer(
    makeTestSettings({ outputDir: freshDir("runs"), models: ["f/one", "f/two"], synthesizer: "f/synth", retries: 0, ...overrides }),
    { client: current().layer }
  )

interface SentMessage {
  readonly role: string
  readonly content: string
}
/** Where the requests of the step under test begin (a new client would also restart the scripts). */
let mark = 0
const markRequests = Effect.sync(() => (mark = sent().length))
const messagesTo = (model: string): ReadonlyArray<ReadonlyArray<SentMessage>> =>
  sent().slice(mark).filter((r) => r.model === model).map((r) => r.messages as ReadonlyArray<SentMessage>)

const readManifest = (runDir: string) => JSON.parse(fs.readFileSync(path.join(runDir, "run.json"), "utf8")) as Record<string, unknown>

describe("a follow-up question", () => {
  it.live("sends every candidate the parent's prompt and final answer, then the new prompt; the synthesizer sees them too", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "What is 2+2?" })
      yield* markRequests
      const second = yield* continueRun(first.manifest.id, { prompt: "And times 3?" })

      for (const model of ["f/one", "f/two"]) {
        expect(messagesTo(model)).toEqual([[
          { role: "user", content: "What is 2+2?" },
          { role: "assistant", content: "FINAL ONE" },
          { role: "user", content: "And times 3?" }
        ]])
      }
      const synth = messagesTo("f/synth")[0]!
      const user = synth.find((m) => m.role === "user")!.content
      expect(user).toContain("<user>\nWhat is 2+2?\n</user>")
      expect(user).toContain("<assistant>\nFINAL ONE\n</assistant>")
      // The earlier turns come before the prompt being answered.
      expect(user.indexOf("FINAL ONE")).toBeLessThan(user.indexOf("And times 3?"))

      expect(second.final).toBe("FINAL TWO")
      expect(second.manifest.parent).toBe(first.manifest.id)
      expect(readManifest(second.runDir)["parent"]).toBe(first.manifest.id)
      expect(readManifest(first.runDir)).not.toHaveProperty("parent")
      expect(fs.readFileSync(path.join(second.runDir, "prompt.md"), "utf8")).toBe("And times 3?")
    }).pipe(Effect.provide(layerFor())))

  it.live("of a three-run chain sends both earlier turns, oldest first", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      const second = yield* continueRun(first.manifest.id, { prompt: "Q2" })
      yield* markRequests
      const third = yield* continueRun(second.manifest.id, { prompt: "Q3" })
      expect(messagesTo("f/one")).toEqual([[
        { role: "user", content: "Q1" },
        { role: "assistant", content: "FINAL ONE" },
        { role: "user", content: "Q2" },
        { role: "assistant", content: "FINAL TWO" },
        { role: "user", content: "Q3" }
      ]])
      expect(third.manifest.parent).toBe(second.manifest.id)
    }).pipe(Effect.provide(layerFor())))

  it.live("leaves out the oldest turns past the context budget, with a visible marker", () =>
    Effect.gen(function*() {
      const long = "x".repeat(300)
      const first = yield* runPipeline({ prompt: `Q1 ${long}` })
      const second = yield* continueRun(first.manifest.id, { prompt: `Q2 ${long}` })
      yield* markRequests
      // Each turn is about 315 characters: the budget holds the newest one only.
      yield* continueRun(second.manifest.id, { prompt: "Q3" })
      const marker = "[… 1 earlier turn left out to fit the context budget …]"
      expect(messagesTo("f/two")).toEqual([[
        { role: "user", content: `${marker}\n\nQ2 ${long}` },
        { role: "assistant", content: "FINAL TWO" },
        { role: "user", content: "Q3" }
      ]])
      const synth = messagesTo("f/synth")[0]!.find((m) => m.role === "user")!.content
      expect(synth).toContain(marker)
      expect(synth).not.toContain("Q1")
    }).pipe(Effect.provide(layerFor({ contextMaxChars: 400 }))))

  it.live("of a re-synthesized follow-up keeps its parent and its earlier turns", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      const second = yield* continueRun(first.manifest.id, { prompt: "Q2" })
      yield* markRequests
      const again = yield* resynthesize({ runId: second.manifest.id })
      expect(again.manifest).toMatchObject({ source: second.manifest.id, parent: first.manifest.id })
      expect(messagesTo("f/synth")[0]!.find((m) => m.role === "user")!.content).toContain("<user>\nQ1\n</user>")
    }).pipe(Effect.provide(layerFor())))

  it.live("with a strategy: the refiners see the earlier turns too, as the synthesizer does", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      yield* markRequests
      yield* continueRun(first.manifest.id, { prompt: "Q2" }).pipe(withCallSettings({ strategy: "refine" }))
      // Each model's second request is its refinement: the conversation, then the question and the answers.
      for (const model of ["f/one", "f/two"]) {
        const refinement = messagesTo(model)[1]!.find((m) => m.role === "user")!.content
        expect(refinement).toContain("<user>\nQ1\n</user>")
        expect(refinement).toContain("<assistant>\nFINAL ONE\n</assistant>")
        expect(refinement.indexOf("FINAL ONE")).toBeLessThan(refinement.indexOf("<prompt>\nQ2"))
      }
    }).pipe(Effect.provide(layerFor())))
})

describe("an interrupted follow-up", () => {
  it.live("keeps its parent in its owner record: its rebuilt manifest names it, and resynth of it is still a follow-up", () =>
    Effect.gen(function*() {
      const store = yield* RunStore
      const first = yield* runPipeline({ prompt: "Q1" })
      const settings = { models: ["f/one"], synthesizer: "f/synth", concurrency: 1, timeoutMs: 1000, retries: 0 }
      const dead = yield* store.createRun(settings, [], first.manifest.id)
      yield* store.writePrompt(dead, "Q2")
      yield* store.writeResponse(dead, 0, "f/one", "an answer to Q2")
      // Its owner "died": another process start time under the same pid.
      const ownerFile = path.join(dead.dir, "owner.json")
      fs.writeFileSync(
        ownerFile,
        fs.readFileSync(ownerFile, "utf8").replace(/"processStartedAt": "[^"]+"/, `"processStartedAt": "2000-01-01T00:00:00.000Z"`)
      )
      yield* markRequests
      const again = yield* resynthesize({ runId: dead.id })
      expect(again.manifest).toMatchObject({ source: dead.id, parent: first.manifest.id })
      expect(messagesTo("f/synth")[0]!.find((m) => m.role === "user")!.content).toContain("<user>\nQ1\n</user>")
    }).pipe(Effect.provide(layerFor())))
})

describe("a run that cannot be continued is refused, nothing sent", () => {
  const refusal = (runId: string) =>
    continueRun(runId, { prompt: "more?" }).pipe(
      Effect.matchEffect({
        onSuccess: (made) => Effect.dieMessage(`not refused: run ${made.manifest.id} was made`),
        onFailure: Effect.succeed
      }),
      Effect.tap(() => Effect.sync(() => expect(sent().slice(mark)).toEqual([])))
    )

  it.live("a malformed id, as get_run refuses it, and a run that does not exist", () =>
    Effect.gen(function*() {
      const malformed = yield* refusal("../x")
      expect(malformed).toMatchObject({ _tag: "RunRefused", message: "cannot continue run ../x: \"../x\" is not a run id" })
      const missing = yield* refusal("20200101-000000-000-00000000")
      expect(missing.message).toMatch(/^cannot continue run 20200101-000000-000-00000000: no run 20200101-000000-000-00000000 in /)
    }).pipe(Effect.provide(layerFor())))

  it.live("a failed run: its status named, and what to do", () =>
    Effect.gen(function*() {
      const failed = yield* runPipeline({ prompt: "Q" }).pipe(withCallSettings({ models: ["f/broken"] }))
      expect(failed.manifest.status).toBe("failed")
      yield* markRequests
      const refused = yield* refusal(failed.manifest.id)
      expect(refused.message).toBe(
        `cannot continue run ${failed.manifest.id}: it failed (status failed) without a final answer; ask the question again instead`
      )
    }).pipe(Effect.provide(layerFor())))

  it.live("a run still going, and an interrupted one (which resynth can finish)", () =>
    Effect.gen(function*() {
      const store = yield* RunStore
      const going = yield* store.createRun({ models: ["f/one"], synthesizer: "f/synth", concurrency: 1, timeoutMs: 1000, retries: 0 })
      expect((yield* refusal(going.id)).message).toMatch(
        new RegExp(`^cannot continue run ${going.id}: it is still running \\(status running\\): wait for its answer`)
      )
      // Its owner "died": another process start time under the same pid.
      const ownerFile = path.join(going.dir, "owner.json")
      fs.writeFileSync(
        ownerFile,
        fs.readFileSync(ownerFile, "utf8").replace(/"processStartedAt": "[^"]+"/, `"processStartedAt": "2000-01-01T00:00:00.000Z"`)
      )
      yield* store.writeResponse(going, 0, "f/one", "an answer")
      expect((yield* refusal(going.id)).message).toBe(
        `cannot continue run ${going.id}: it was interrupted (status interrupted: its process ended) before its final answer; ` +
          `synthesize its answers first (parallel-llm resynth ${going.id}, or the resynthesize tool), then continue that new run`
      )
    }).pipe(Effect.provide(layerFor())))

  it.live("a thread with a missing earlier turn, and one whose parent links loop", () =>
    Effect.gen(function*() {
      const store = yield* RunStore
      const first = yield* runPipeline({ prompt: "Q1" })
      const second = yield* continueRun(first.manifest.id, { prompt: "Q2" })
      yield* markRequests
      // The first run's manifest made to point at the second: a loop.
      const firstJson = path.join(first.runDir, "run.json")
      fs.writeFileSync(firstJson, JSON.stringify({ ...readManifest(first.runDir), parent: second.manifest.id }))
      expect((yield* refusal(second.manifest.id)).message).toBe(
        `cannot continue run ${second.manifest.id}: its thread loops back to run ${second.manifest.id} (a run.json was edited?)`
      )
      fs.rmSync(first.runDir, { recursive: true })
      expect((yield* refusal(second.manifest.id)).message).toBe(
        `cannot continue run ${second.manifest.id}: no run ${first.manifest.id} in ${store.root}`
      )
    }).pipe(Effect.provide(layerFor())))
})

describe("a deep thread (issue 23, finding 22)", () => {
  /**
   * `depth` runs on disk, each a copy of `first` following up on the one before: the chain a long `--continue`
   * session leaves. Returns the newest run's id.
   */
  const chainOf = (first: { readonly runDir: string; readonly manifest: { readonly id: string } }, depth: number, idsFrom = 0) => {
    const root = path.dirname(first.runDir)
    const manifest = readManifest(first.runDir)
    let parent = first.manifest.id
    for (let n = 1; n < depth; n++) {
      const id = `20300101-000000-000-${(idsFrom + n).toString(16).padStart(8, "0")}`
      const dir = path.join(root, id)
      fs.mkdirSync(dir)
      for (const file of ["prompt.md", "final.md"]) fs.copyFileSync(path.join(first.runDir, file), path.join(dir, file))
      fs.writeFileSync(path.join(dir, "run.json"), JSON.stringify({ ...manifest, id, parent }))
      parent = id
    }
    return parent
  }

  it.live("is refused past followUpMaxTurns, naming the setting, before anything is sent", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      const newest = chainOf(first, 60)
      yield* markRequests
      const refused = yield* failureOf(continueRun(newest, { prompt: "more?" }))
      expect(refused.message).toBe(
        `cannot continue run ${newest}: its thread holds more than 50 turns (--follow-up-max-turns, PARALLEL_LLM_FOLLOW_UP_MAX_TURNS): ` +
          "ask a new question instead, or raise the setting"
      )
      expect(sent().slice(mark)).toEqual([])
    }).pipe(Effect.provide(layerFor())))

  it.live("up to followUpMaxTurns turns are sent, one more is refused", () =>
    Effect.gen(function*() {
      const first = yield* runPipeline({ prompt: "Q1" })
      const three = chainOf(first, 3)
      yield* markRequests
      yield* continueRun(three, { prompt: "fourth?" })
      expect(messagesTo("f/one")[0]).toHaveLength(3 * 2 + 1)
      const four = chainOf(first, 4, 100)
      const refused = yield* failureOf(continueRun(four, { prompt: "fifth?" }))
      expect(refused.message).toContain("its thread holds more than 3 turns (--follow-up-max-turns")
    }).pipe(Effect.provide(layerFor({ followUpMaxTurns: 3 }))))
})
