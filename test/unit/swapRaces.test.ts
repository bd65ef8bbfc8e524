import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { sha256Hex } from "../../src/domain/hash.js"
import { readRunResource } from "../../src/mcp/resources.js"
import type { Attachment } from "../../src/programs/attachments/attachment.js"
import { collectAttachments } from "../../src/programs/attachments/collect.js"
import { saveAttachments } from "../../src/programs/attachments/plan.js"
import { makeRunWrites } from "../../src/programs/run/writes.js"
import { RunStore } from "../../src/services/runStore.js"
import { Settings } from "../../src/services/settings.js"
import { storeDiskWith } from "../support/storeDiskDoubles.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

// Issue 23, findings 3, 4 and 9: the runs directory and attachments, read while someone inside swaps a file for
// a symlink to a file outside (a writer loop in another process, bounded in swaps and time), or leaves a FIFO
// where a file is expected; and a run's many writes, bounded.

const tempDir = makeTempDirs("pllm-race-")
const RUN_ID = "20260101-000000-000-abcdef12"

const layerFor = (outputDir: string) =>
  Layer.mergeAll(RunStore.DefaultWithoutDependencies, NodeFileSystem.layer, NodePath.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(Settings.Test(makeTestSettings({ outputDir })), NodeFileSystem.layer, NodePath.layer)),
    Layer.merge(Logger.remove(Logger.defaultLogger))
  )

/**
 * A process that swaps `target` between a regular file holding `inside` and a symlink to `outsideFile`, each
 * swap an atomic rename, `swaps` times or for at most 3 s. `started` resolves once it is about to swap (a reader
 * that starts before reads a file nobody swaps: a node start-up's worth of CPU proving nothing), `ended` when it
 * has ended.
 */
const startSwapper = (target: string, inside: string, outsideFile: string, swaps = 400) => {
  const script = `
    const fs = require("node:fs")
    const [target, inside, outside, swaps] = process.argv.slice(1)
    const file = target + ".swap-file", link = target + ".swap-link"
    const until = Date.now() + 3000
    process.stdout.write("swapping\\n")
    // Each state holds 1 ms, asleep: a busy pause would take the reader's core on a small machine. What the race
    // proves grows with the swaps a read can straddle, not with the time between them: a check-then-read broken
    // by hand is caught about as often as with 2 ms, in half the reader's CPU.
    const pause = new Int32Array(new SharedArrayBuffer(4))
    for (let i = 0; i < Number(swaps) && Date.now() < until; i++) {
      if (i % 2 === 0) { fs.writeFileSync(file, inside); fs.renameSync(file, target) }
      else { fs.rmSync(link, { force: true }); fs.symlinkSync(outside, link); fs.renameSync(link, target) }
      Atomics.wait(pause, 0, 0, 1)
    }
    fs.writeFileSync(file, inside); fs.renameSync(file, target)
  `
  const child = spawn(process.execPath, ["-e", script, target, inside, outsideFile, String(swaps)], {
    stdio: ["ignore", "pipe", "ignore"]
  })
  let done = false
  const ended = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  void ended.then(() => (done = true))
  // Its first line, or its end should it never get there (the reads then find it done and the race not run).
  const started = Promise.race([new Promise<void>((resolve) => child.stdout.once("data", () => resolve())), ended])
  child.stdout.resume()
  return { isDone: () => done, started, ended }
}

/** A runs directory with one finished-looking run, and a secret file beside it. */
const runsLayout = () => {
  const dir = tempDir()
  const runs = path.join(dir, "runs")
  fs.mkdirSync(path.join(runs, RUN_ID, "responses"), { recursive: true })
  fs.writeFileSync(path.join(runs, RUN_ID, "prompt.md"), "the question\n")
  fs.writeFileSync(path.join(runs, RUN_ID, "final.md"), "the answer\n")
  fs.writeFileSync(path.join(dir, "secret.txt"), "SECRET outside\n")
  return { dir, runs, secret: path.join(dir, "secret.txt") }
}

describe("check-then-read races", () => {
  it.live("resources/read of a final.md swapped with a symlink to an outside file never returns the outside file", () => {
    const { runs, secret } = runsLayout()
    return Effect.gen(function*() {
      const swapper = startSwapper(path.join(runs, RUN_ID, "final.md"), "the answer\n", secret)
      yield* Effect.promise(() => swapper.started)
      const texts: Array<string> = []
      let refused = 0
      const uri = `parallel-llm://runs/${RUN_ID}/final.md`
      for (let i = 0; i < 3_000 && !swapper.isDone(); i++) {
        const read = yield* Effect.either(readRunResource(uri))
        if (Either.isRight(read)) texts.push(...read.right.contents.map((c) => c.text))
        else refused++
      }
      yield* Effect.promise(() => swapper.ended)
      expect(texts.filter((t) => t.includes("SECRET"))).toEqual([])
      // The race was run: reads landed on both sides of the swaps.
      expect(texts.length).toBeGreaterThan(0)
      expect(refused).toBeGreaterThan(0)
    }).pipe(Effect.provide(layerFor(runs)))
  })

  it.live("an attached file swapped with a symlink to an outside file is never read from outside", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const root = path.join(dir, "root")
      fs.mkdirSync(root)
      fs.writeFileSync(path.join(root, "notes.txt"), "inside notes\n")
      fs.writeFileSync(path.join(dir, "secret.txt"), "SECRET outside\n")
      const swapper = startSwapper(path.join(root, "notes.txt"), "inside notes\n", path.join(dir, "secret.txt"))
      yield* Effect.promise(() => swapper.started)
      const options = { base: root, allowed: [fs.realpathSync(root)], what: "files" }
      const texts: Array<string> = []
      let refused = 0
      for (let i = 0; i < 3_000 && !swapper.isDone(); i++) {
        const read = yield* Effect.either(collectAttachments(["notes.txt"], options))
        if (Either.isRight(read)) texts.push(...read.right.map((a) => a.text ?? ""))
        else refused++
      }
      yield* Effect.promise(() => swapper.ended)
      expect(texts.filter((t) => t.includes("SECRET"))).toEqual([])
      expect(texts.length).toBeGreaterThan(0)
      expect(refused).toBeGreaterThan(0)
    }).pipe(Effect.provide(layerFor(tempDir()))))
})

describe("a FIFO where a run's file is expected", () => {
  it.live("listing, reading and showing the run finish; the FIFO is refused as not a regular file", () =>
    Effect.gen(function*() {
      const { runs } = runsLayout()
      execFileSync("mkfifo", [path.join(runs, RUN_ID, "run.json")])
      fs.rmSync(path.join(runs, RUN_ID, "prompt.md"))
      execFileSync("mkfifo", [path.join(runs, RUN_ID, "prompt.md")])
      const store = yield* RunStore.pipe(Effect.provide(layerFor(runs)))
      const listed = yield* store.listRuns(10)
      expect(listed.map((r) => [r.id, r.manifest, r.promptPreview])).toEqual([[RUN_ID, undefined, ""]])
      expect((yield* store.readRun(RUN_ID)).manifest).toBeUndefined()
      const error = yield* Effect.flip(store.readRunFile(RUN_ID, "run.json"))
      expect(error.message).toBe(`run.json of run ${RUN_ID} is not a regular file`)
    }))
})

describe("bounded writes", () => {
  it.live("a run's 200 attachment copies are written at most 16 at a time, not all at once", () =>
    Effect.gen(function*() {
      let writing = 0
      let most = 0
      // The real disk, counting the files being written at each moment.
      const counting = storeDiskWith((real) => ({
        writeFile: (file, data, options, done) => {
          most = Math.max(most, ++writing)
          real.writeFile(file, data, options, (error) => {
            writing--
            done(error)
          })
        }
      }))
      const outputDir = tempDir()
      const files: ReadonlyArray<Attachment> = Array.from({ length: 200 }, (_, i) => {
        const bytes = new TextEncoder().encode(`file ${i}\n`)
        return { path: `f${i}.txt`, kind: "text", mediaType: "text/plain", bytes, sha256: sha256Hex(bytes), text: `file ${i}\n` }
      })
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* RunStore
        const run = yield* store.makeRunDir()
        const writes = makeRunWrites(run, yield* Effect.scope)
        yield* saveAttachments(run, { files, seesImages: () => false, records: [] }, writes.save)
        yield* writes.allSettled
        expect(yield* writes.unwritten).toEqual([])
        expect(fs.readdirSync(path.join(run.dir, "attachments"))).toHaveLength(200)
      })).pipe(
        Effect.provide(
          RunStore.DefaultWithoutDependencies.pipe(
            Layer.provideMerge(
              Layer.mergeAll(Settings.Test(makeTestSettings({ outputDir })), counting, NodeFileSystem.layer, NodePath.layer)
            )
          )
        )
      )
      expect(most).toBeGreaterThan(1)
      expect(most).toBeLessThanOrEqual(16)
    }))
})
