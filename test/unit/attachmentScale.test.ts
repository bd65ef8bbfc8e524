import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { describe, expect } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { collectAttachments } from "../../src/programs/attachments/collect.js"
import { itLive } from "../support/itLive.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { layerTestSettings } from "../support/testSettings.js"

// Attaching a directory costs work in proportion to its files, however deep they lie: the work is counted (every
// call on the FileSystem and Path services), never timed. Each file used to walk up to the work tree's top for its
// .gitignore rules, so a tree as deep as it is wide cost its files times its depth.

const tempDir = makeTempDirs("pllm-attach-scale-")

/**
 * The smaller tree's files; the larger has ten times as many, and is ten times as deep. Enough to tell linear from
 * files times depth by far (the old .gitignore walk: 23 times the calls at 20 and 200), small enough for the unit tier.
 */
const SMALL = 20

const trees = new Map<number, string>()
/**
 * A git work tree (made once for both specs) whose `d/` holds `files` text files, ten a directory, each directory inside the one before (the
 * depth grows with the files); beside each text file a `.log` file the top's .gitignore leaves out, and in the
 * first directory a .gitignore of its own that leaves out the `skip-` files below it.
 */
const treeOf = (files: number) => {
  const made = trees.get(files)
  if (made !== undefined) return made
  const top = tempDir()
  trees.set(files, top)
  fs.mkdirSync(path.join(top, ".git"))
  fs.writeFileSync(path.join(top, ".gitignore"), "*.log\n")
  let dir = path.join(top, "d")
  for (let i = 0; i < files; i++) {
    if (i % 10 === 0) dir = path.join(dir, `l${i / 10}`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`)
    fs.writeFileSync(path.join(dir, `f${i}.log`), `log ${i}\n`)
    if (i % 10 === 0) fs.writeFileSync(path.join(dir, `skip-${i}.txt`), "left out\n")
  }
  fs.writeFileSync(path.join(top, "d", "l0", ".gitignore"), "skip-*\n.gitignore\n")
  return top
}

/** `service` with every call of its methods counted in `calls`. */
const counted = <I, S extends object>(tag: Context.Tag<I, S>, calls: { n: number }) =>
  Layer.effect(
    tag,
    Effect.map(tag, (service) =>
      new Proxy(service, {
        get: (target, key) => {
          const value: unknown = Reflect.get(target, key)
          return typeof value === "function"
            ? (...args: Array<unknown>) => {
              calls.n++
              return Reflect.apply(value, target, args)
            }
            : value
        }
      }))
  )

/** The files `spec` attaches in a tree of `files` files, and the service calls it took. */
const attachCounted = (files: number, spec: string) =>
  Effect.gen(function*() {
    const top = treeOf(files)
    const calls = { n: 0 }
    const layer = Layer.mergeAll(
      counted(FileSystem.FileSystem, calls).pipe(Layer.provide(NodeFileSystem.layer)),
      counted(Path.Path, calls).pipe(Layer.provide(NodePath.layer)),
      layerTestSettings({ attachMaxFiles: 2 * files })
    )
    const attached = yield* collectAttachments([spec], { base: top, what: "--attach" }).pipe(Effect.provide(layer))
    return { attached, calls: calls.n }
  })

describe("attaching many files", () => {
  for (const spec of ["d", "d/**/*"]) {
    itLive.effect(`costs work in proportion to the files (${spec})`, () =>
      Effect.gen(function*() {
        const small = yield* attachCounted(SMALL, spec)
        const large = yield* attachCounted(10 * SMALL, spec)
        // Every text file, and only those: the top's rules and the first directory's apply all the way down.
        for (const [run, files] of [[small, SMALL], [large, 10 * SMALL]] as const) {
          expect(run.attached).toHaveLength(files)
          expect(run.attached.every((a) => /\/f\d+\.txt$/.test(a.path))).toBe(true)
        }
        // Ten times the files (and ten times as deep), at most ten times the work: linear, with a little slack.
        expect(large.calls).toBeLessThanOrEqual(11 * small.calls)
      }), 120_000)
  }
})

describe("a file or directory reached twice", () => {
  itLive.effect("is read once, and a link back up the tree is not walked again", () =>
    Effect.gen(function*() {
      const top = tempDir()
      fs.mkdirSync(path.join(top, "w"))
      fs.writeFileSync(path.join(top, "w", "a.txt"), "a\n")
      fs.symlinkSync("a.txt", path.join(top, "w", "link.txt"))
      fs.symlinkSync(path.join(top, "w"), path.join(top, "w", "loop"))
      // Two files found by the walk (a.txt and its link) and one named: the loop, walked again, would find more.
      const layer = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, layerTestSettings({ attachMaxFiles: 3 }))
      const attached = yield* collectAttachments(["w", "w/a.txt"], { base: top, what: "--attach" }).pipe(Effect.provide(layer))
      expect(attached.map((a) => a.path)).toEqual(["w/a.txt"])
    }))
})
