import * as fs from "node:fs"
import * as module from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { runCli } from "../support/spawnCli.js"

// The bin's loader (made by scripts/bundle.mjs) keeps a V8 code cache per command in the user's cache directory
// on Node versions without module.enableCompileCache. Every build makes new files there: on a miss the loader
// deletes the caches of all but the four other builds written last, so rebuilding never fills the disk.

const onNode20 = typeof (module as { enableCompileCache?: unknown }).enableCompileCache !== "function"
const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A cache directory holding two command caches of each of six other builds, the first written longest ago. */
const cacheWithOtherBuilds = () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "parallel-llm-cache-"))
  dirs.push(home)
  const cacheDir = path.join(home, "parallel-llm")
  fs.mkdirSync(cacheDir)
  const builds = [1, 2, 3, 4, 5, 6].map((n) => n.toString(16).padStart(16, "0"))
  builds.forEach((build, i) => {
    for (const command of ["ask", "serve"]) {
      const file = path.join(cacheDir, `${build}-${process.version}-${process.arch}-${command}.v8`)
      fs.writeFileSync(file, "old")
      const written = new Date(Date.UTC(2026, 10, 1 + i))
      fs.utimesSync(file, written, written)
    }
  })
  fs.writeFileSync(path.join(cacheDir, "notes.txt"), "not a cache")
  return { home, cacheDir, builds }
}

const buildsIn = (cacheDir: string) =>
  [...new Set(fs.readdirSync(cacheDir).filter((name) => name.endsWith(".v8")).map((name) => name.slice(0, 16)))].sort()

describe.skipIf(!onNode20)("the bin's code cache", () => {
  it("on a miss keeps the four other builds written last, deletes the rest and nothing that is not a cache", async () => {
    const { builds, cacheDir, home } = cacheWithOtherBuilds()
    const result = await runCli(["--version"], { env: { PATH: process.env["PATH"], XDG_CACHE_HOME: home } })
    expect(result.code).toBe(0)
    const own = fs.readdirSync(cacheDir).filter((name) => name.endsWith("---version.v8") && !builds.includes(name.slice(0, 16)))
    expect(own, "the run wrote its own cache").toHaveLength(1)
    const kept = buildsIn(cacheDir).filter((build) => builds.includes(build))
    expect(kept).toEqual(builds.slice(2))
    expect(fs.readdirSync(cacheDir)).toContain("notes.txt")
  })

  it("on a hit leaves the directory as it is", async () => {
    const { cacheDir, home } = cacheWithOtherBuilds()
    const env = { PATH: process.env["PATH"], XDG_CACHE_HOME: home }
    expect((await runCli(["--version"], { env })).code).toBe(0)
    const older = path.join(cacheDir, `${"7".padStart(16, "0")}-${process.version}-${process.arch}-ask.v8`)
    fs.writeFileSync(older, "old")
    fs.utimesSync(older, new Date(Date.UTC(2026, 0, 1)), new Date(Date.UTC(2026, 0, 1)))
    const before = fs.readdirSync(cacheDir).sort()
    expect((await runCli(["--version"], { env })).code).toBe(0)
    expect(fs.readdirSync(cacheDir).sort()).toEqual(before)
  })
})

describe.skipIf(!onNode20)("a command's V8 flags and its code cache", () => {
  it("batch (a heap flag of its own) hits the cache its last run wrote, rather than rewriting it at every start", async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "parallel-llm-cache-"))
    dirs.push(home)
    // The flag is in force once the command starts: a usage error after that is enough (no provider is asked).
    const env = { PATH: process.env["PATH"], XDG_CACHE_HOME: home, OPENROUTER_BASE_URL: "http://127.0.0.1:9/api/v1" }
    const batch = () => runCli(["batch", path.join(home, "prompts.jsonl"), "--runs", "0"], { env })
    expect((await batch()).code).toBe(2)
    const cacheDir = path.join(home, "parallel-llm")
    const file = fs.readdirSync(cacheDir).find((name) => name.endsWith("-batch.v8"))
    if (file === undefined) throw new Error("the first run wrote no cache")
    const written = fs.statSync(path.join(cacheDir, file))
    expect((await batch()).code).toBe(2)
    const after = fs.statSync(path.join(cacheDir, file))
    expect([after.ino, after.mtimeMs], "a cache V8 rejected is written again").toEqual([written.ino, written.mtimeMs])
  })
})
