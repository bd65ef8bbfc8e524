import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Plugin, TransformOptions, TransformResult } from "vite"

// vitest 3 transforms every test module again on every run (TypeScript, import analysis, its SSR rewrite and their
// source maps): for the unit tier ~2 s of CPU in vitest's own process, during which the workers wait for their modules.
// Its persistent cache (`fsModuleCache`) came with vitest 4, which @effect/vitest for Effect 3 does not support. This
// keeps each module's transform on disk between runs instead: one entry a module, used only while the module's text and
// everything else that decides its transform (the inputs and the file names below) are what they were.

/** Where the cache is, and what decides every module's transform besides the module's own text. */
export interface TransformCacheOptions {
  /** The Vite root: a module's id is a path from it, or an absolute one. */
  readonly root: string
  /** The cache's directory: one folder per digest of the inputs, the others removed. */
  readonly dir: string
  /** Files whose content decides every transform: the vitest config, tsconfig, the lockfile (the versions). */
  readonly inputs: ReadonlyArray<string>
  /** Folders whose file names decide how an import resolves (`./x.js` to `x.ts`): a file added, moved or removed there changes the digest. */
  readonly trees: ReadonlyArray<string>
}

/** A Vite server's `transformRequest`. */
export type Transform = (url: string, options?: TransformOptions) => Promise<TransformResult | null>

/** An entry as written: the hash of the text it was made from, and the transform's code and source map. */
const isEntry = (value: unknown): value is { source: string; code: string; map: TransformResult["map"] } =>
  typeof value === "object" && value !== null && "source" in value && typeof value.source === "string" && "code" in value &&
  typeof value.code === "string" && "map" in value &&
  (value.map === null || (typeof value.map === "object" && "mappings" in value.map && typeof value.map.mappings === "string"))

const sha256 = (...parts: ReadonlyArray<string | Buffer>): string => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part).update("\0")
  return hash.digest("hex")
}

/** The file names under `dir` (not node_modules', not dot folders'), sorted. */
const namesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules" || entry.name.startsWith(".")
      ? []
      : entry.isDirectory()
      ? namesUnder(path.join(dir, entry.name)).map((name) => `${entry.name}/${name}`)
      : [entry.name]
  ).sort()

const digestOf = (options: TransformCacheOptions): string =>
  sha256(
    options.root,
    ...options.inputs.flatMap((file) => [file, fs.readFileSync(file)]),
    ...options.trees.flatMap((tree) => [tree, namesUnder(tree).join("\n")])
  )

/** The file a vite-node module id names (absolute, or from the root), or undefined for a virtual or queried one. */
const fileOf = (root: string, url: string): string | undefined => {
  if (url.includes("?") || url.includes("\0") || url.startsWith("/@")) return undefined
  return url.startsWith(`${path.resolve(root)}${path.sep}`) ? url : path.join(root, url)
}

/** `f`'s value, or undefined if it throws: the cache is never a reason for a run to fail, only to transform again. */
const attempt = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

/** Written whole or not at all: two vitest processes may share the cache. */
const writeEntry = (file: string, text: string): void => {
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text)
  fs.renameSync(temporary, file)
}

/** The folder for the inputs as they are now, made; the folders of other inputs removed. */
const folderFor = (options: TransformCacheOptions): string => {
  const folder = path.join(options.dir, digestOf(options).slice(0, 24))
  fs.mkdirSync(folder, { recursive: true })
  for (const other of fs.readdirSync(options.dir)) {
    if (path.join(options.dir, other) !== folder) fs.rmSync(path.join(options.dir, other), { recursive: true, force: true })
  }
  return folder
}

/**
 * `transform` (a Vite server's `transformRequest`) answering SSR requests from the cache where it can. An entry is
 * found by the module's id and used only when the text it was made from hashes as the file's text does now.
 */
export const cachedTransform = (transform: Transform, options: TransformCacheOptions): Transform => {
  const folder = attempt(() => folderFor(options))
  if (folder === undefined) return transform
  return async (url, transformOptions) => {
    const file = transformOptions?.ssr === true ? fileOf(options.root, url) : undefined
    // A module's text; none for vite's own ids.
    const text = file === undefined ? undefined : attempt(() => fs.readFileSync(file))
    if (text === undefined) return transform(url, transformOptions)
    const source = sha256(text)
    const entry = path.join(folder, `${sha256(url).slice(0, 32)}.json`)
    const kept: unknown = attempt(() => JSON.parse(fs.readFileSync(entry, "utf8")))
    if (isEntry(kept) && kept.source === source) return { code: kept.code, map: kept.map }
    const result = await transform(url, transformOptions)
    // Written before vite-node adds its inline source map to the result (it changes the object it is given).
    if (result !== null) attempt(() => writeEntry(entry, JSON.stringify({ source, code: result.code, map: result.map })))
    return result
  }
}

/** The plugin: every project's server transforms through the cache. */
export const transformCache = (options: TransformCacheOptions): Plugin => ({
  name: "parallel-llm:transform-cache",
  configureServer(server) {
    server.transformRequest = cachedTransform(server.transformRequest.bind(server), options)
  }
})
