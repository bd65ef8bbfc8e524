import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Manifest } from "../../src/domain/manifest.js"
import { makePermitLine } from "../../src/services/permitLine.js"
import { RunStore } from "../../src/services/runStore.js"
import { type DiskDone, StoreDisk, type StoreDiskShape, writeAtomically, type WriteFailure } from "../../src/services/storeDisk.js"
import { storeDiskWith } from "../support/storeDiskDoubles.js"
import { makeTempDirs } from "../support/tempDirs.js"

// The run store's writes through its own seam (StoreDisk): what an interruption leaves on disk.

const tempDir = makeTempDirs("pllm-storedisk-")

describe("the run store's writes, interrupted", () => {
  it.live("end the writes in flight, start none of those waiting, and leave neither a file nor a temporary one", () =>
    Effect.gen(function*() {
      // The real disk, but a write's end is told only when the test says: the writes stay in flight.
      const allHeld = yield* Deferred.make<void>()
      const held: Array<() => void> = []
      let started = 0
      const holding = storeDiskWith((real) => ({
        writeFile: (file, data, options, done) => {
          started++
          real.writeFile(file, data, options, (error) => {
            if (held.push(() => done(error)) === 16) Deferred.unsafeDone(allHeld, Exit.void)
          })
        }
      }))
      const store = yield* RunStore.pipe(Effect.provide(RunStore.Test(tempDir()).pipe(Layer.provide(holding))))
      const run = yield* store.makeRunDir()
      const writes = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i + 1),
        (i) => Effect.fork(store.writeResponse(run, i, `test/m${i}`, `answer ${i}`)),
        { concurrency: 1 }
      )
      // 16 writes at once: four wait for a token.
      yield* Deferred.await(allHeld)
      expect(started).toBe(16)
      const interrupting = yield* Effect.fork(Fiber.interruptAll(writes))
      // The four waiting end at once, nothing of theirs in flight; the interruption waits for the writes in flight,
      // which are then let end.
      const ended = yield* Effect.yieldNow().pipe(
        Effect.zipRight(Effect.forEach(writes, Fiber.poll)),
        Effect.map((polls) => polls.filter(Option.isSome).length),
        Effect.repeat({ until: (count) => count >= 4 }),
        Effect.timeout("5 seconds")
      )
      expect(ended).toBe(4)
      expect(Option.isNone(yield* Fiber.poll(interrupting))).toBe(true)
      for (const end of held.splice(0)) end()
      yield* Fiber.join(interrupting)

      expect(started).toBe(16)
      expect(fs.readdirSync(path.join(run.dir, "responses"))).toEqual([])
    }))

  it.live("an uninterruptible write (a run's save) interrupted in flight ends written, and its interruption waits for it", () =>
    Effect.gen(function*() {
      const inFlight = yield* Deferred.make<void>()
      let end: (() => void) | undefined
      const holding = storeDiskWith((real) => ({
        writeFile: (file, data, options, done) =>
          real.writeFile(file, data, options, (error) => {
            end = () => done(error)
            Deferred.unsafeDone(inFlight, Exit.void)
          })
      }))
      const store = yield* RunStore.pipe(Effect.provide(RunStore.Test(tempDir()).pipe(Layer.provide(holding))))
      const run = yield* store.makeRunDir()
      const write = yield* Effect.fork(Effect.uninterruptible(store.writeResponse(run, 1, "test/m", "the answer")))
      yield* Deferred.await(inFlight)
      const interrupting = yield* Effect.fork(Fiber.interrupt(write))
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(interrupting))).toBe(true)
      end?.()
      yield* Fiber.join(interrupting)
      expect(fs.readFileSync(path.join(run.dir, "responses", "02-test-m.md"), "utf8")).toBe("the answer")
    }))

  it.live("a write whose rename fails leaves no temporary file, and says which file", () =>
    Effect.gen(function*() {
      const refusing = storeDiskWith((real) => ({
        rename: (from: string, to: string, done: DiskDone) =>
          to.endsWith("run.json")
            ? done(Object.assign(new Error("EACCES: permission denied, rename"), { code: "EACCES" }))
            : real.rename(from, to, done)
      }))
      const dir = tempDir()
      const store = yield* RunStore.pipe(Effect.provide(RunStore.Test(dir).pipe(Layer.provide(refusing))))
      const run = yield* store.makeRunDir()
      yield* store.writeOwner(run)
      const manifest: Manifest = {
        id: run.id,
        status: "ok",
        createdAt: run.createdAt.toISOString(),
        finishedAt: run.createdAt.toISOString(),
        durationMs: 0,
        prompt: { chars: 1, sha256: "0".repeat(64) },
        settings: { models: ["test/a"], synthesizer: "test/s", concurrency: 1, timeoutMs: 1000, retries: 0 },
        candidates: [],
        usage: {}
      }
      const error = yield* Effect.flip(store.writeFinal(run, "the answer", manifest))
      expect(error.message).toBe(`cannot write ${path.join(run.dir, "run.json")}: permission denied`)
      // final.md went in first; run.json never landed, so the owner record stays: the run is not finished.
      expect(fs.readdirSync(run.dir).sort()).toEqual(["final.md", "owner.json", "responses"])
    }))
})

describe("the run store's write gate", () => {
  it("writes Node refuses at once fail one after another down a line of 10 000, and every permit comes back", () => {
    // The first 16 writes are held; every later one throws as Node does for a path it will not take.
    const held: Array<DiskDone> = []
    const disk: StoreDiskShape = {
      ...StoreDisk.defaultValue(),
      writeFile: (_file, _data, _options, done) => {
        if (held.length === 16) throw new TypeError("The argument 'path' must be a string without null bytes")
        held.push(done)
      },
      unlink: (_file, done) => done(null)
    }
    const gate = makePermitLine(16)
    const files = Array.from({ length: 10_000 }, (_, i) => ({ target: `/nowhere/f${i}`, temp: `/nowhere/.f${i}.tmp`, data: "x" }))
    const outcomes: Array<WriteFailure | undefined> = []
    writeAtomically(disk, gate, files, 0o600, undefined, (failure) => void outcomes.push(failure))
    expect(held).toHaveLength(16)
    // Each held write ending hands its permit down the line, where every write fails at once and hands it on.
    for (const done of held) done(null)
    expect(outcomes).toHaveLength(1)
    expect(outcomes[0]?.target).toBe("/nowhere/f16")
    let free = 0
    while (gate.tryEnter()) free++
    expect(free).toBe(16)
  })
})
