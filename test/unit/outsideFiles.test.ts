import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Effect, Layer, Logger, Schema } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { MAX_JSON_DEPTH } from "../../src/domain/jsonDepth.js"
import { makeFileRoots } from "../../src/mcp/roots.js"
import { decodeArguments } from "../../src/mcp/tools/arguments.js"
import { collectAttachments, type CollectOptions } from "../../src/programs/attachments/collect.js"
import { ProcessIo, processIoOf } from "../../src/services/processIo.js"
import { Settings } from "../../src/services/settings.js"
import { loadSettings } from "../../src/settings/load.js"
import type { SettingsValue } from "../../src/settings/values.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

// Issue 23, findings 1, 2, 3, 5, 7, 8 and 23: what is read from outside, and how much of it, in process.

const tempDir = makeTempDirs("pllm-outside-")

const layerFor = (overrides: Partial<SettingsValue>, logs: Array<string>) =>
  Layer.mergeAll(Settings.Test(makeTestSettings(overrides)), NodeFileSystem.layer, NodePath.layer).pipe(
    Layer.merge(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => logs.push([message].flat().join(" ")))))
  )

/** collectAttachments as `ask --attach` (or, with `allowed`, `process_prompt`) runs it: the paths attached, or the refusal. */
const collect = (specs: ReadonlyArray<string>, options: CollectOptions, overrides: Partial<SettingsValue> = {}) => {
  const logs: Array<string> = []
  return collectAttachments(specs, options).pipe(
    Effect.map((files) => ({ files: files.map((f) => f.path), logs })),
    Effect.catchTag("RunRefused", (e) => Effect.succeed({ refused: e.message, logs })),
    Effect.provide(layerFor(overrides, logs))
  )
}

const project = () => {
  const dir = tempDir()
  fs.mkdirSync(path.join(dir, "src"))
  fs.writeFileSync(path.join(dir, "src", "a.ts"), "export const a = 1\n")
  return dir
}

describe("attachments: files that are not what they say", () => {
  it.live("a .gitignore that links to /dev/zero is not read: the directory is attached, memory stays low", () =>
    Effect.gen(function*() {
      const before = process.memoryUsage().rss
      const dir = project()
      fs.symlinkSync("/dev/zero", path.join(dir, "src", ".gitignore"))
      const result = yield* collect(["src"], { base: dir, what: "--attach" })
      expect(result).toMatchObject({ files: ["src/a.ts"] })
      expect(result.logs.join("\n")).toMatch(/\.gitignore: a symbolic link, not a regular file: not read/)
      // Growth, not the total: the worker holds other test files' modules too (vitest's isolate: false).
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024)
    }))

  it.live("a FIFO named .gitignore does not hang the collection", () =>
    Effect.gen(function*() {
      const dir = project()
      execFileSync("mkfifo", [path.join(dir, "src", ".gitignore")])
      expect(yield* collect(["src"], { base: dir, what: "--attach" })).toMatchObject({ files: ["src/a.ts"] })
    }))

  it.live("/proc/self/pagemap (size 0 by stat) is refused by the per-file cap, not read whole", () =>
    Effect.gen(function*() {
      const before = process.memoryUsage().rss
      const result = yield* collect(["/proc/self/pagemap"], { base: tempDir(), what: "--attach" }, { attachMaxBytes: 65_536 })
      expect(result).toMatchObject({
        refused: "--attach: /proc/self/pagemap is larger than the 65,536 bytes allowed per file (--attach-max-bytes)"
      })
      // Growth, not the total: the worker holds other test files' modules too (vitest's isolate: false).
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024)
    }))

  it.live("a directory of 1,001 files is refused by --attach-max-files before any file is read", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.mkdirSync(path.join(dir, "many"))
      for (let i = 0; i < 1_001; i++) fs.writeFileSync(path.join(dir, "many", `f${String(i).padStart(4, "0")}.txt`), "x\n")
      expect(yield* collect(["many"], { base: dir, what: "--attach" })).toMatchObject({
        refused: "--attach: with many/f1000.txt more than 1,000 files are attached, the most one run may attach (--attach-max-files)"
      })
      expect(yield* collect(["many/*.txt"], { base: dir, what: "--attach" }, { attachMaxFiles: 100 })).toMatchObject({
        refused: expect.stringMatching(/more than 100 files are attached.*\(--attach-max-files\)$/)
      })
    }))
})

describe("globs that leave where they start", () => {
  const layout = () => {
    const dir = tempDir()
    fs.mkdirSync(path.join(dir, "root", "proj", "a", "b"), { recursive: true })
    fs.writeFileSync(path.join(dir, "root", "proj", "a", "b", "x.txt"), "inside\n")
    fs.writeFileSync(path.join(dir, "zz-secret.txt"), "outside\n")
    return { dir, root: path.join(dir, "root") }
  }

  it.live("over MCP a glob holding .. is refused, naming nothing it could have found", () =>
    Effect.gen(function*() {
      const { root } = layout()
      const options = { base: root, allowed: [fs.realpathSync(root)], what: "files" }
      const result = yield* collect(["proj/**/../../../zz-*.txt"], options)
      expect(result).toMatchObject({
        refused: "files: proj/**/../../../zz-*.txt: a glob may not hold \"..\": name the directory it starts from inside your roots"
      })
      expect(JSON.stringify(result)).not.toContain("zz-secret")
      expect(yield* collect(["proj/**/../../../../**"], options)).toMatchObject({ refused: expect.stringMatching(/may not hold "\.\."/) })
    }))

  it.live("on the CLI a .. after a wildcard is refused; before it, it names where the glob starts", () =>
    Effect.gen(function*() {
      const { root } = layout()
      expect(yield* collect(["proj/**/../../../zz-*.txt"], { base: root, what: "--attach" })).toMatchObject({
        refused: expect.stringMatching(/^--attach: proj\/\*\*\/\.\.\/\.\.\/\.\.\/zz-\*\.txt: "\.\." after a wildcard/)
      })
      expect(yield* collect(["../root/*/../../zz-*.txt"], { base: root, what: "--attach" })).toMatchObject({
        refused: expect.stringMatching(/"\.\." after a wildcard/)
      })
      expect(yield* collect(["../zz-*.txt"], { base: root, what: "--attach" })).toMatchObject({ files: ["../zz-secret.txt"] })
    }))

  it.live("a glob from / or from the home directory is refused at once, not crawled", () =>
    Effect.gen(function*() {
      expect(yield* collect(["/**"], { base: tempDir(), what: "--attach" })).toMatchObject({
        refused: expect.stringMatching(
          /^--attach: \/\*\*: a glob from the root directory would crawl all of it; start it from a directory below/
        )
      })
      expect(yield* collect([`${os.homedir()}/**/*.md`], { base: tempDir(), what: "--attach" })).toMatchObject({
        refused: expect.stringMatching(/a glob from the home directory would crawl all of it/)
      })
    }))
})

describe("no implicit roots", () => {
  /** A server whose client declares no roots, connected in memory: the roots it grants. */
  const rootsOfClientWithout = (overrides: Partial<SettingsValue>, cwd?: string) =>
    Effect.gen(function*() {
      const server = new Server({ name: "test", version: "1" }, { capabilities: {} })
      const client = new Client({ name: "no-roots", version: "1" }, { capabilities: {} })
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      yield* Effect.promise(() => Promise.all([server.connect(serverSide), client.connect(clientSide)]))
      const started = makeFileRoots(server).pipe(Effect.provide(layerFor(overrides, [])))
      // The server's working directory as its command line sees it (ProcessIo), not the test process's own.
      const roots = yield* (cwd === undefined ? started : Effect.provideService(started, ProcessIo, { ...processIoOf(process), cwd }))
      yield* Effect.promise(() => client.close())
      return roots
    })

  it.live("a client without roots, in a server started in the home directory, may read nothing; the refusal says how to allow", () =>
    Effect.gen(function*() {
      const home = tempDir()
      fs.writeFileSync(path.join(home, "id_ed25519"), "PRIVATE KEY\n")
      const roots = yield* rootsOfClientWithout({}, home)
      // Its working directory is where relative paths start, and nothing more: it grants no root.
      expect(roots.base).toBe(home)
      expect(roots.allowed).toEqual([])
      expect(yield* collect(["id_ed25519"], { base: home, allowed: roots.allowed, what: "files" })).toMatchObject({
        refused: "files: id_ed25519 lies outside the directories this server may read: none (this client sent no roots, " +
          "and the server was started without --allow-dir). Start the server with --allow-dir <directory> " +
          "(or PARALLEL_LLM_ALLOW_DIRS), or use a client that sends its roots"
      })
      const allowed = yield* rootsOfClientWithout({ allowDirs: [home] })
      expect(allowed).toEqual({ base: home, allowed: [fs.realpathSync(home)] })
      expect(yield* collect(["id_ed25519"], { base: allowed.base, allowed: allowed.allowed, what: "files" })).toMatchObject({
        files: ["id_ed25519"]
      })
    }))
})

describe("JSON nested too deep", () => {
  const deepArray = (levels: number) => "[".repeat(levels) + "]".repeat(levels)

  it.live("a deeply nested config file (800 KB) is refused in one line, not with a stack overflow", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "config.json")
      fs.writeFileSync(file, `{"models": ${deepArray(400_000)}}`)
      const error = yield* loadSettings({ flags: {}, configFlag: file, env: { OPENROUTER_API_KEY: "sk-test" } }).pipe(
        Effect.provide(NodeFileSystem.layer),
        Effect.flip
      )
      expect(error.message).toBe(`${file}: invalid: nested deeper than ${MAX_JSON_DEPTH} levels`)
    }))

  it.live("a FIFO as the config file is refused at once", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "config.json")
      execFileSync("mkfifo", [file])
      const error = yield* loadSettings({ flags: {}, configFlag: file, env: { OPENROUTER_API_KEY: "sk-test" } }).pipe(
        Effect.provide(NodeFileSystem.layer),
        Effect.flip
      )
      expect(error.message).toBe(`cannot read ${file}: not a regular file`)
    }))

  it.live("tool arguments 300,000 levels deep are invalid arguments, not an internal error", () =>
    Effect.gen(function*() {
      const args: unknown = JSON.parse(`{"prompt": "q", "models": ${deepArray(300_000)}}`)
      const error = yield* decodeArguments(
        "process_prompt",
        Schema.Struct({ prompt: Schema.String, models: Schema.Array(Schema.String) }),
        args
      )
        .pipe(Effect.flip)
      expect(error.message).toBe(`Invalid arguments for process_prompt: (arguments): invalid: nested deeper than ${MAX_JSON_DEPTH} levels`)
    }))
})
