import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Manifest, RunSettings } from "../../src/domain/manifest.js"
import { decideRunState, FOREIGN_RUN_STALE_MS, type OwnerRecord, UNOWNED_RUN_STALE_MS } from "../../src/domain/runState.js"
import { readRunWithManifest } from "../../src/programs/recoverRun.js"
import { RunStore } from "../../src/services/runStore.js"
import { deadPid } from "../support/deadPid.js"
import { itLive } from "../support/itLive.js"
import { manifestOf } from "../support/manifestOf.js"
import { makeTempDirs } from "../support/tempDirs.js"

// Item 5 of issue 13: each run records its owner while it is live, and readers tell a run whose
// writer died (`interrupted`) from one still going; nothing is read outside the runs directory.

const storeFor = (outputDir: string) => RunStore.Test(outputDir)

const tempDir = makeTempDirs("pllm-runstate-")

const settings: RunSettings = { models: ["a/one", "b/two", "c/three"], synthesizer: "s/synth", concurrency: 5, timeoutMs: 1000, retries: 0 }

const manifestFor = (id: string): Manifest => manifestOf(id, { settings })

describe("decideRunState", () => {
  const owner: OwnerRecord = { pid: 42, host: "here", processStartedAt: "2025-01-01T00:00:00.000Z", createdAt: "2025-01-01T00:00:01.000Z" }
  const base = { hasManifest: false, owner, createdAtMs: 0, nowMs: 1000, host: "here", probe: undefined }
  const started = Date.parse(owner.processStartedAt)
  it("finished with a manifest, whatever the owner", () => {
    expect(decideRunState({ ...base, hasManifest: true, probe: { _tag: "NoSuchProcess" } })).toBe("finished")
  })
  it("on this host, by the owner's pid and start time", () => {
    expect(decideRunState({ ...base, probe: { _tag: "NoSuchProcess" } })).toBe("interrupted")
    expect(decideRunState({ ...base, probe: { _tag: "Alive", startedAtMs: started + 300 } })).toBe("running")
    expect(decideRunState({ ...base, probe: { _tag: "Alive", startedAtMs: undefined } })).toBe("running")
    // The pid belongs to a later process: the owner is gone.
    expect(decideRunState({ ...base, probe: { _tag: "Alive", startedAtMs: started + 3_600_000 } })).toBe("interrupted")
  })
  it("on another host, running until it is older than any run lives", () => {
    expect(decideRunState({ ...base, host: "elsewhere" })).toBe("running")
    expect(decideRunState({ ...base, host: "elsewhere", nowMs: FOREIGN_RUN_STALE_MS + 1 })).toBe("interrupted")
  })
  it("without an owner record, running only briefly", () => {
    expect(decideRunState({ ...base, owner: undefined })).toBe("running")
    expect(decideRunState({ ...base, owner: undefined, nowMs: UNOWNED_RUN_STALE_MS + 1 })).toBe("interrupted")
  })
})

describe("the owner record", () => {
  itLive.effect("is written by createRun and removed when the manifest lands", () =>
    Effect.gen(function*() {
      const store = yield* RunStore
      const run = yield* store.createRun(settings)
      const owner = JSON.parse(fs.readFileSync(path.join(run.dir, "owner.json"), "utf8"))
      expect(owner).toMatchObject({ pid: process.pid, host: os.hostname(), settings })
      expect(Date.parse(owner.processStartedAt)).toBeLessThanOrEqual(Date.now())
      expect(yield* store.readRun(run.id)).toMatchObject({ state: "running", manifest: undefined, answers: [] })
      expect((yield* store.listRuns(5))[0]).toMatchObject({ id: run.id, state: "running" })

      yield* store.writeManifest(run, manifestFor(run.id))
      expect(fs.existsSync(path.join(run.dir, "owner.json"))).toBe(false)
      expect(yield* store.readRun(run.id)).toMatchObject({ state: "finished", owner: undefined })
    }).pipe(Effect.provide(storeFor(tempDir()))))

  itLive.effect("a run whose owner died is interrupted: its answers listed, its temporary files swept, its manifest rebuilt", () => {
    const dir = tempDir()
    return Effect.gen(function*() {
      const store = yield* RunStore
      const run = yield* store.createRun(settings)
      yield* store.writePrompt(run, "the prompt")
      yield* store.writeResponse(run, 0, "a/one", "one")
      yield* store.writeResponse(run, 2, "c/three", "half", "partial")
      const ownerFile = path.join(run.dir, "owner.json")
      fs.writeFileSync(ownerFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(ownerFile, "utf8")), pid: deadPid() }))
      const temps = [path.join(run.dir, ".final.md.0123.tmp"), path.join(run.dir, "responses", ".02-b-two.md.abcd.tmp")]
      for (const temp of temps) fs.writeFileSync(temp, "x".repeat(1000))

      const listed = (yield* store.listRuns(5))[0]!
      expect(listed).toMatchObject({ id: run.id, state: "interrupted", promptPreview: "the prompt" })
      expect(listed.answers).toEqual(["responses/01-a-one.md", "responses/03-c-three.partial.md"])
      for (const temp of temps) expect(fs.existsSync(temp), temp).toBe(false)

      const { manifest, view } = yield* readRunWithManifest(run.id)
      expect(view.state).toBe("interrupted")
      expect(manifest).toMatchObject({
        id: run.id,
        status: "interrupted",
        settings,
        candidates: [
          { model: "a/one", status: "ok", file: "responses/01-a-one.md" },
          { model: "b/two", status: "cancelled", reason: "interrupted" },
          { model: "c/three", status: "cancelled", partialFile: "responses/03-c-three.partial.md" }
        ],
        prompt: { chars: "the prompt".length }
      })
      // Its end is its last write: the answers' files, not its creation.
      expect(view.lastWriteAt).toBeInstanceOf(Date)
      expect(manifest!.finishedAt).toBe(view.lastWriteAt!.toISOString())
    }).pipe(Effect.provide(storeFor(dir)))
  })

  itLive.effect("temporary files of a live writer are left alone", () =>
    Effect.gen(function*() {
      const store = yield* RunStore
      const run = yield* store.createRun(settings)
      const temp = path.join(run.dir, ".prompt.md.0123.tmp")
      fs.writeFileSync(temp, "being written")
      expect((yield* store.readRun(run.id)).state).toBe("running")
      expect(fs.existsSync(temp)).toBe(true)
    }).pipe(Effect.provide(storeFor(tempDir()))))
})

describe("symlinks inside the runs directory", () => {
  itLive.effect("are never followed out of it", () => {
    const dir = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret")
    return Effect.gen(function*() {
      const store = yield* RunStore
      const run = yield* store.createRun(settings)
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(run.dir, "prompt.md"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(run.dir, "responses", "01-a-one.md"))
      fs.symlinkSync("/etc/passwd", path.join(run.dir, "final.md"))
      for (const file of ["prompt.md", "responses/01-a-one.md", "final.md"]) {
        const error = yield* store.readRunFile(run.id, file).pipe(Effect.flip)
        expect(error._tag, file).toBe("InvalidRunPath")
      }
      // A whole "run" that is a symlink to a directory elsewhere: neither listed nor read.
      const fakeId = "20250101-000000-000-0badc0de"
      fs.mkdirSync(path.join(outside, "run"))
      fs.writeFileSync(path.join(outside, "run", "run.json"), JSON.stringify(manifestFor(fakeId)))
      fs.symlinkSync(path.join(outside, "run"), path.join(dir, fakeId))
      expect((yield* store.readRunFile(fakeId, "run.json").pipe(Effect.flip))._tag).toBe("RunFileNotFound")
      expect((yield* store.readRun(fakeId).pipe(Effect.flip))._tag).toBe("RunFileNotFound")
      const listed = yield* store.listRuns(10)
      expect(listed.map((r) => r.id)).toEqual([run.id])
      expect(listed[0]!.promptPreview).toBe("")
    }).pipe(Effect.provide(storeFor(dir)))
  })
})
