import { describe, expect, it } from "@effect/vitest"
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Either, Option, Redacted, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Manifest } from "../../src/domain/manifest.js"
import { makeLiveRuns } from "../../src/mcp/liveRuns.js"
import { makeProgress } from "../../src/mcp/progress.js"
import { makeRedactor } from "../../src/mcp/redact.js"
import { parseRunResourceUri, runResourceUri } from "../../src/mcp/resources.js"
import { decodeArguments } from "../../src/mcp/tools/arguments.js"
import { NoArguments } from "../../src/mcp/tools/fields.js"
import { tools } from "../../src/mcp/tools/index.js"
import { ProcessPromptInput } from "../../src/mcp/tools/processPrompt.js"

import { RunStore } from "../../src/services/runStore.js"

import type { RunEvent } from "../../src/programs/run/request.js"
import { PROMPT_PREVIEW_CHARS } from "../../src/services/runReader.js"
import { itClock } from "../support/itClock.js"
import { itLive } from "../support/itLive.js"
import { manifestOf } from "../support/manifestOf.js"
import { makeTempDirs } from "../support/tempDirs.js"

// The MCP server's parts without a process: schemas, resource URIs, the run store's reading side, progress.

const storeFor = (outputDir: string) => RunStore.Test(outputDir)

const tempDir = makeTempDirs("pllm-mcp-units-")

const manifestFor = (id: string, status: Manifest["status"]): Manifest =>
  manifestOf(id, { status, candidates: [{ model: "a/one", status: "ok", attempts: 1, file: "responses/01-a-one.md" }] })

describe("tool schemas", () => {
  it("advertise an object at the root of every input and output schema", () => {
    for (const tool of tools.map((t) => t.definition)) {
      expect(tool.inputSchema.type, tool.name).toBe("object")
      expect(tool.outputSchema?.type ?? "object", tool.name).toBe("object")
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain("$ref")
      expect(JSON.stringify(tool.outputSchema ?? {}), tool.name).not.toContain("$ref")
    }
  })

  itLive.effect("decode good arguments, trimming model ids", () =>
    Effect.gen(function*() {
      const input = yield* decodeArguments("process_prompt", ProcessPromptInput, {
        prompt: "hi",
        models: [" openai/gpt-5 "],
        synthesizer: "x/y"
      })
      expect(input).toEqual({ prompt: "hi", models: ["openai/gpt-5"], synthesizer: "x/y" })
      expect(yield* decodeArguments("get_config", NoArguments, undefined)).toEqual({})
    }))

  itLive.effect("name every bad field, once", () =>
    Effect.gen(function*() {
      const error = yield* decodeArguments("process_prompt", ProcessPromptInput, {
        prompt: 1,
        models: ["ok/model", "bad model"],
        color: "red"
      }).pipe(Effect.flip)
      expect(error._tag).toBe("InvalidArguments")
      expect([...error.fields].sort()).toEqual(["color", "models[1]", "prompt"])
      expect(error.message).toContain("color: unknown argument")
      const missing = yield* decodeArguments("process_prompt", ProcessPromptInput, {}).pipe(Effect.flip)
      expect(missing.fields).toEqual(["prompt"])
      const extra = yield* decodeArguments("list_models", NoArguments, { all: true }).pipe(Effect.flip)
      expect(extra.fields).toEqual(["all"])
    }))
})

describe("run resource URIs", () => {
  it("percent-encode the slash of a candidate file and accept both forms back", () => {
    const uri = runResourceUri("20250101-000000-000-0123abcd", "responses/01-openai-gpt-5.md")
    expect(uri).toBe("parallel-llm://runs/20250101-000000-000-0123abcd/responses%2F01-openai-gpt-5.md")
    const expected = { runId: "20250101-000000-000-0123abcd", file: "responses/01-openai-gpt-5.md" }
    expect(parseRunResourceUri(uri)).toEqual(Either.right(expected))
    expect(parseRunResourceUri(decodeURIComponent(uri))).toEqual(Either.right(expected))
  })

  it("refuse other schemes, missing parts and broken escapes", () => {
    for (
      const uri of [
        "file:///etc/passwd",
        "parallel-llm://runs/",
        "parallel-llm://runs/abc",
        "parallel-llm://runs//final.md",
        "parallel-llm://runs/x/%E0%A4%A"
      ]
    ) {
      expect(Either.isLeft(parseRunResourceUri(uri)), uri).toBe(true)
    }
  })
})

describe("RunStore writing side", () => {
  itLive.effect(
    "writes final.md and run.json together; when final.md cannot land, neither does run.json, and no temporary file stays",
    () => {
      const dir = tempDir()
      return Effect.gen(function*() {
        const store = yield* RunStore
        const good = yield* store.createRun()
        expect(yield* store.writeFinal(good, "the answer", manifestFor(good.id, "ok"))).toBe("final.md")
        expect(fs.readdirSync(good.dir).sort()).toEqual(["final.md", "responses", "run.json"])
        expect(fs.readFileSync(path.join(good.dir, "final.md"), "utf8")).toBe("the answer")
        expect(JSON.parse(fs.readFileSync(path.join(good.dir, "run.json"), "utf8"))).toMatchObject({ id: good.id, status: "ok" })

        const bad = yield* store.createRun()
        // A directory where final.md goes: its rename fails, so the manifest that names it must not land either.
        fs.mkdirSync(path.join(bad.dir, "final.md"))
        const error = yield* store.writeFinal(bad, "the answer", manifestFor(bad.id, "ok")).pipe(Effect.flip)
        expect(error._tag).toBe("StoreError")
        expect(error.message).toContain(path.join(bad.dir, "final.md"))
        expect(fs.readdirSync(bad.dir).sort()).toEqual(["final.md", "owner.json", "responses"])
      }).pipe(Effect.provide(storeFor(dir)))
    }
  )

  itLive.effect("makes its root again when it is removed while the process runs", () => {
    const dir = path.join(tempDir(), "runs")
    return Effect.gen(function*() {
      const store = yield* RunStore
      yield* store.createRun()
      fs.rmSync(dir, { recursive: true })
      const again = yield* store.createRun()
      expect(fs.existsSync(path.join(again.dir, "responses"))).toBe(true)
    }).pipe(Effect.provide(storeFor(dir)))
  })
})

describe("RunStore reading side", () => {
  itLive.effect("lists the newest runs first, with manifest, final and a prompt preview", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const store = yield* RunStore
      const first = yield* store.createRun()
      yield* store.writePrompt(first, "first prompt")
      yield* store.writeResponse(first, 0, "a/one", "one")
      yield* store.writeFinal(first, "the answer", manifestFor(first.id, "ok"))
      const second = yield* store.createRun()
      yield* store.writePrompt(second, "x".repeat(5_000))
      fs.mkdirSync(path.join(dir, "not-a-run"))
      fs.writeFileSync(path.join(dir, "stray.txt"), "")

      const runs = yield* store.listRuns(50)
      expect(runs.map((r) => r.id)).toEqual([second.id, first.id])
      expect(runs[0]).toMatchObject({ hasFinal: false, manifest: undefined })
      expect(runs[0]!.promptPreview).toBe("x".repeat(PROMPT_PREVIEW_CHARS))
      expect(runs[1]).toMatchObject({ hasFinal: true, promptPreview: "first prompt", dir: first.dir })
      expect(runs[1]!.manifest?.status).toBe("ok")
      expect((yield* store.listRuns(1)).map((r) => r.id)).toEqual([second.id])
    }).pipe(Effect.provide(storeFor(dir)))
  })

  itLive.effect("lists nothing when the output directory does not exist yet", () =>
    Effect.gen(function*() {
      const store = yield* RunStore
      expect(yield* store.listRuns(50)).toEqual([])
    }).pipe(Effect.provide(storeFor(path.join(tempDir(), "never-made")))))

  itLive.effect("reads the files of the run layout and nothing else", () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, "secret.txt"), "secret")
    return Effect.gen(function*() {
      const store = yield* RunStore
      const run = yield* store.createRun()
      yield* store.writePrompt(run, "the prompt")
      const file = yield* store.writeResponse(run, 1, "vendor/model:free", "an answer")
      expect(file).toBe("responses/02-vendor-model-free.md")
      expect(yield* store.readRunFile(run.id, file)).toBe("an answer")
      expect(yield* store.readRunFile(run.id, "prompt.md")).toBe("the prompt")

      for (
        const bad of [
          "../secret.txt",
          "../../etc/passwd",
          "/etc/passwd",
          "responses/../prompt.md",
          "responses/01-x.txt",
          "responses/x/01-a.md",
          ".prompt.md.tmp",
          ""
        ]
      ) {
        const error = yield* store.readRunFile(run.id, bad).pipe(Effect.flip)
        expect(error._tag, bad).toBe("InvalidRunPath")
      }
      for (const badId of ["..", "../x", `${run.id}/..`, "20250101-000000-000-ZZZZZZZZ"]) {
        const error = yield* store.readRunFile(badId, "prompt.md").pipe(Effect.flip)
        expect(error._tag, badId).toBe("InvalidRunPath")
      }
      const missing = yield* store.readRunFile(run.id, "final.md").pipe(Effect.flip)
      expect(missing._tag).toBe("RunFileNotFound")
      const noRun = yield* store.readRunFile("20000101-000000-000-00000000", "final.md").pipe(Effect.flip)
      expect(noRun).toMatchObject({ _tag: "RunFileNotFound", message: expect.stringContaining("no run") })
    }).pipe(Effect.provide(storeFor(dir)))
  })
})

describe("progress notifications", () => {
  const record = (model: string, ok: boolean) =>
    ok
      ? { model, status: "ok" as const, attempts: 1, latencyMs: 1200 }
      : {
        model,
        status: "error" as const,
        attempts: 2,
        latencyMs: 300,
        error: { tag: "RateLimited", message: "HTTP 429: slow down", httpStatus: 429 }
      }
  const finished = (index: number, model: string, ok: boolean): RunEvent => ({
    _tag: "CandidateFinished",
    outcome: { index, model, content: ok ? "x" : undefined, record: record(model, ok) },
    finished: 0,
    answered: 0,
    total: 3
  })
  const run = { id: "20250101-000000-000-0123abcd", dir: "/runs/x", createdAt: new Date(0) }

  /** A run held open by the test, which emits its events by hand. */
  const heldRun = Effect.gen(function*() {
    const runs = yield* makeLiveRuns
    const release = yield* Deferred.make<void>()
    let emit: (event: RunEvent) => Effect.Effect<void> = () => Effect.void
    const live = yield* runs.start((onEvent) =>
      Effect.gen(function*() {
        emit = onEvent
        yield* onEvent({ _tag: "RunStarted", run, models: ["a/one", "a/two", "a/three"] })
        yield* Deferred.await(release)
        return { manifest: manifestFor(run.id, "partial"), final: "x", runDir: run.dir }
      })
    )
    return { live, emit: (event: RunEvent) => emit(event) }
  })

  itClock.scoped("report each step and a heartbeat at least every 10 s while a step lasts, strictly upward", () =>
    Effect.gen(function*() {
      const sent: Array<ServerNotification> = []
      const { live, emit } = yield* heldRun
      const progress = yield* makeProgress("token-1", (n) => {
        sent.push(n)
        return Promise.resolve()
      })
      yield* Effect.fork(progress.watch(live))
      yield* TestClock.adjust("1 millis")
      yield* emit(finished(1, "a/two", true))
      yield* TestClock.adjust("1 millis")
      yield* emit(finished(0, "a/one", false))
      yield* TestClock.adjust("35 seconds")
      yield* emit(finished(2, "a/three", true))
      yield* TestClock.adjust("1 millis")
      yield* emit({ _tag: "SynthesisStarted", model: "a/synth", candidates: 2 })
      yield* TestClock.adjust("21 seconds")

      const params = sent.map((n) => n.params as { progressToken: string; progress: number; total: number; message: string })
      const values = params.map((p) => p.progress)
      for (let i = 1; i < values.length; i++) expect(values[i]!, `notification ${i}`).toBeGreaterThan(values[i - 1]!)
      for (const p of params) expect(p).toMatchObject({ progressToken: "token-1", total: 5 })
      // Heartbeats while the third candidate takes 35 s: at least three, each below the next step.
      expect(values.filter((v) => v > 2 && v < 3).length).toBeGreaterThanOrEqual(3)
      expect(values.filter((v) => v > 4 && v < 5).length).toBeGreaterThanOrEqual(2)
      const messages = params.map((p) => p.message)
      expect(messages[0]).toContain(run.id)
      expect(messages).toContainEqual(expect.stringContaining("a/one failed (HTTP 429: slow down)"))
      expect(messages).toContainEqual(expect.stringContaining("2/3 answered (a/two in 1.2 s, a/three in 1.2 s)"))
      expect(messages[messages.length - 1]).toContain("synthesizing with a/synth")
    }))

  itClock.scoped("send nothing without a progress token", () =>
    Effect.gen(function*() {
      const sent: Array<ServerNotification> = []
      const { live, emit } = yield* heldRun
      const progress = yield* makeProgress(undefined, (n) => {
        sent.push(n)
        return Promise.resolve()
      })
      yield* Effect.fork(progress.watch(live))
      yield* emit({ _tag: "SynthesisStarted", model: "a/synth", candidates: 2 })
      yield* TestClock.adjust("30 seconds")
      expect(sent).toEqual([])
    }))
})

describe("redaction", () => {
  it("masks the API key in every string of a result, keeping its shape", () => {
    const key = "sk-or-v1-0123456789abcdef"
    const redact = makeRedactor(Option.some(Redacted.make(key)))
    const result = {
      content: [{ type: "text", text: `HTTP 401: got ${key}` }],
      structuredContent: { n: 1, ok: true, none: null, list: [key] }
    }
    expect(redact.value(result)).toEqual({
      content: [{ type: "text", text: "HTTP 401: got <redacted>" }],
      structuredContent: { n: 1, ok: true, none: null, list: ["<redacted>"] }
    })
    expect(redact.text(`a ${key} b ${key}`)).toBe("a <redacted> b <redacted>")
    // Without a key, strings are still cleaned of control characters on their way out (see mcpHygiene.test.ts).
    const none = makeRedactor(Option.none())
    expect(none.value(result)).toEqual(result)
    expect(none.value({ text: "a\u001b[2Jb\u202Ec" })).toEqual({ text: "a[2Jbc" })
  })
})
