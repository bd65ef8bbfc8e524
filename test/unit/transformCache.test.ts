import * as fs from "node:fs"
import * as path from "node:path"
import type { TransformResult } from "vite"
import { describe, expect, it } from "vitest"
import { tempRoot } from "../support/tempDirs.js"
import { cachedTransform, type TransformCacheOptions } from "../support/transformCache.js"

// The cache of test modules' transforms between vitest runs (vitest.config.ts): a run gets what a fresh transform would
// give, from the cache only where nothing that decides it changed.

const { freshDir } = tempRoot("pllm-transform-cache-")

/** A project: a module, a config file and a folder of sources; and a stand-in for Vite's transform that counts its calls. */
const project = () => {
  const root = freshDir("project")
  fs.mkdirSync(path.join(root, "src"))
  fs.writeFileSync(path.join(root, "src", "a.ts"), "export const a: number = 1\n")
  fs.writeFileSync(path.join(root, "config.ts"), "export default {}\n")
  const options: TransformCacheOptions = {
    root,
    dir: path.join(root, "cache"),
    inputs: [path.join(root, "config.ts")],
    trees: [path.join(root, "src")]
  }
  const calls: Array<string> = []
  const transform = (url: string): Promise<TransformResult | null> => {
    calls.push(url)
    const file = url.startsWith(root) ? url : path.join(root, url)
    if (!fs.existsSync(file)) return Promise.resolve(null)
    const code = `// from ${fs.readFileSync(file, "utf8")}`
    return Promise.resolve({ code, map: { mappings: "" } })
  }
  return { root, options, calls, transform }
}

describe("the transform cache", () => {
  it("answers a later run's request for an unchanged module without transforming it, with the same code and map", async () => {
    const p = project()
    const first = await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    const again = await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    expect(p.calls).toEqual(["/src/a.ts"])
    expect(again).toEqual({ code: first?.code, map: first?.map })
    // The same module by its absolute id is another entry, made once too.
    const absolute = path.join(p.root, "src", "a.ts")
    await cachedTransform(p.transform, p.options)(absolute, { ssr: true })
    await cachedTransform(p.transform, p.options)(absolute, { ssr: true })
    expect(p.calls).toEqual(["/src/a.ts", absolute])
  })

  it("transforms a module again once its text changed, and keeps the new transform", async () => {
    const p = project()
    await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    fs.writeFileSync(path.join(p.root, "src", "a.ts"), "export const a: number = 2\n")
    const changed = await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    expect(changed?.code).toBe("// from export const a: number = 2\n")
    await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    expect(p.calls).toHaveLength(2)
  })

  it("starts over when an input changes or a file is added to a tree, and removes what was kept before", async () => {
    const p = project()
    await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    const before = fs.readdirSync(p.options.dir)
    fs.writeFileSync(path.join(p.root, "config.ts"), "export default { alias: {} }\n")
    await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    expect(p.calls).toHaveLength(2)
    const after = fs.readdirSync(p.options.dir)
    expect(after).toHaveLength(1)
    expect(after).not.toEqual(before)
    // `./b.js` may now resolve to another file: every module is transformed again.
    fs.writeFileSync(path.join(p.root, "src", "b.ts"), "export const b = 1\n")
    await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    expect(p.calls).toHaveLength(3)
  })

  it("passes on what is not a file's SSR transform, and a damaged entry, without keeping or failing", async () => {
    const p = project()
    const cached = cachedTransform(p.transform, p.options)
    for (const url of ["/src/a.ts", "/@vite/env", "/src/a.ts?raw", "/src/missing.ts"]) {
      await cached(url)
      await cached(url, url === "/src/a.ts" ? {} : { ssr: true })
    }
    expect(p.calls).toEqual([
      "/src/a.ts",
      "/src/a.ts",
      "/@vite/env",
      "/@vite/env",
      "/src/a.ts?raw",
      "/src/a.ts?raw",
      "/src/missing.ts",
      "/src/missing.ts"
    ])
    await cached("/src/a.ts", { ssr: true })
    const [folder] = fs.readdirSync(p.options.dir)
    const [entry] = fs.readdirSync(path.join(p.options.dir, folder!))
    fs.writeFileSync(path.join(p.options.dir, folder!, entry!), "{ cut sh")
    const read = await cachedTransform(p.transform, p.options)("/src/a.ts", { ssr: true })
    expect(read?.code).toBe("// from export const a: number = 1\n")
    expect(p.calls.filter((url) => url === "/src/a.ts")).toHaveLength(4)
  })

  it("transforms as without it where the cache cannot be kept: its folder gone, or never made", async () => {
    const p = project()
    const cached = cachedTransform(p.transform, p.options)
    // Another vitest process, on other inputs, removed this one's folder.
    fs.rmSync(p.options.dir, { recursive: true })
    expect((await cached("/src/a.ts", { ssr: true }))?.code).toBe("// from export const a: number = 1\n")
    fs.writeFileSync(p.options.dir, "a file in the way")
    const without = cachedTransform(p.transform, p.options)
    expect((await without("/src/a.ts", { ssr: true }))?.code).toBe("// from export const a: number = 1\n")
    expect(p.calls).toHaveLength(2)
  })
})
