// Second step of `npm run build` (after `tsc -p tsconfig.build.json`, which type-checks and emits dist/):
// bundles the CLI into one file so that start-up does not resolve, read and compile ~500 ES modules.
//
//   dist/parallel-llm.cjs   src/main.ts and its dependencies, tree-shaken, whitespace and syntax minified (esbuild)
//   dist/main.js            the bin: a small loader that runs the bundle with a V8 code cache made on the
//                           user's machine (see the loader's own comment; README, Performance)
import * as esbuild from "esbuild"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { fromIndexes } from "./effectIndexes.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")
const BUNDLE = "parallel-llm.cjs"

/** Writes a file the way the run store does: a temporary sibling, then a rename (a spawned CLI never reads half a file). */
const writeAtomic = (file, data) => {
  const temp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temp, data)
  fs.renameSync(temp, file)
}

/**
 * `@effect/platform-node/Undici` re-exports the whole `undici` package (fetch, WebSocket, cache, mock…,
 * about 1 MB, plus Node's internal copy of undici that its cookie module pulls in). The platform's HTTP
 * client only needs the `Agent` dispatcher with its request API, which is exactly what undici's index
 * wires up with `Object.assign(Dispatcher.prototype, api)`.
 */
const slimUndici = {
  name: "slim-undici",
  setup(build) {
    build.onResolve(
      { filter: /^undici$/ },
      (args) =>
        args.importer.includes(`${path.sep}@effect${path.sep}platform-node${path.sep}`)
          ? { path: "undici", namespace: "slim-undici" }
          : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "slim-undici" }, () => ({
      resolveDir: root,
      loader: "js",
      contents: [
        `import Dispatcher from "undici/lib/dispatcher/dispatcher.js"`,
        `import api from "undici/lib/api/index.js"`,
        `import Agent from "undici/lib/dispatcher/agent.js"`,
        `import globalDispatcher from "undici/lib/global.js"`,
        `Object.assign(Dispatcher.prototype, api)`,
        `export const getGlobalDispatcher = globalDispatcher.getGlobalDispatcher`,
        `export const setGlobalDispatcher = globalDispatcher.setGlobalDispatcher`,
        `export { Agent, Dispatcher }`,
        `export default { Agent, Dispatcher, getGlobalDispatcher, setGlobalDispatcher }`
      ].join("\n")
    }))
  }
}

/**
 * `import.meta.url` keeps meaning "this module's URL": in each of our modules it becomes the URL the
 * module has in tsc's dist/ layout (src/mcp/server.ts → dist/mcp/server.js), so relative paths such as
 * `new URL("../package.json", import.meta.url)` resolve as they do unbundled.
 */
const ourModules = {
  name: "our-modules",
  setup(build) {
    const src = path.join(root, "src") + path.sep
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(src)) return undefined
      const text = fromIndexes(fs.readFileSync(args.path, "utf8"), args.path)
      if (!text.includes("import.meta.url")) return { contents: text, loader: "ts" }
      const relative = `./${path.relative(src, args.path).split(path.sep).join("/").replace(/\.ts$/, ".js")}`
      return { contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(relative)}, __bundle_url).href`), loader: "ts" }
    })
  }
}

/**
 * Vega (`eval --plot`) is about 1.2 MB: it goes in a file of its own, dist/plot.cjs, which the bundle requires
 * only when a plot is drawn, so no other command parses it. Its canvas module would import the optional native
 * `canvas` package with a top-level await (not possible in CommonJS); an SVG needs no canvas, so it gets none.
 */
const PLOT = "plot.cjs"
const plotApart = {
  name: "plot-apart",
  setup(build) {
    // A require, not an import(): the loader runs the bundle as a script, where import() is still experimental.
    build.onResolve({ filter: /\/plotSvg\.js$/ }, () => ({ path: PLOT, namespace: "plot-apart" }))
    build.onLoad({ filter: /.*/, namespace: "plot-apart" }, () => ({
      loader: "js",
      contents: `module.exports = require(${JSON.stringify(`./${PLOT}`)})`
    }))
    build.onResolve({ filter: new RegExp(`^\\./${PLOT.replace(".", "\\.")}$`) }, (args) => ({ path: args.path, external: true }))
  }
}
const noCanvas = {
  name: "no-canvas",
  setup(build) {
    build.onResolve({ filter: /^vega-canvas$/ }, () => ({ path: "vega-canvas", namespace: "no-canvas" }))
    build.onLoad({ filter: /.*/, namespace: "no-canvas" }, () => ({
      loader: "js",
      contents: "export const canvas = () => null\nexport const image = () => null"
    }))
  }
}

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["src/main.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Whitespace and syntax only: identifiers keep their names, so error names, inspected values and stack
  // traces read as in the source without esbuild's keepNames, whose runtime __name() call on every
  // function created cost about 7 % of a batch's CPU (profiled).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  write: false,
  outfile: path.join(dist, BUNDLE),
  logLevel: "warning",
  plugins: [slimUndici, ourModules, plotApart],
  // Dependencies that read import.meta.url get the bundle's own URL.
  define: { "import.meta.url": "__bundle_url" },
  banner: { js: `var __bundle_url = require("node:url").pathToFileURL(__filename).href;` }
})

const plot = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["src/programs/eval/plotSvg.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  write: false,
  outfile: path.join(dist, PLOT),
  logLevel: "warning",
  plugins: [noCanvas]
})

// The run viewer (`runs open`): one self-contained HTML page, its script and style inline (no network, no
// eval, no inline handlers: within the MCP Apps default content security policy). Read only by `runs open`,
// so the CLI's start-up does not pay for it.
const viewerScript = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["src/viewer/page/main.ts"],
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2020",
  minify: true,
  legalComments: "none",
  write: false,
  logLevel: "warning"
})
const viewerStyle = await esbuild.transform(fs.readFileSync(path.join(root, "src/viewer/page/style.css"), "utf8"), {
  loader: "css",
  minify: true
})
const viewerHtml = [
  `<!doctype html>`,
  `<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
  `<title>parallel-llm run</title><style>${viewerStyle.code.trim()}</style></head>`,
  `<body><div id="app"><main><p>Loading the run…</p></main></div>`,
  // A "</script" inside the code would end the element early.
  `<script>${viewerScript.outputFiles[0].text.trim().replaceAll("</script", "<\\/script")}</script></body></html>`,
  ""
].join("\n")

const bundle = result.outputFiles[0]
if (bundle === undefined) throw new Error("esbuild produced no output")
const code = bundle.text.replace(/^#!.*\n/, "\n")
const hash = crypto.createHash("sha256").update(code).digest("hex").slice(0, 16)

/** How many other builds' code caches the loader keeps (see pruneOtherBuilds in the loader). */
const KEPT_BUILDS = 4

/**
 * V8 flags of a command, set by the loader before the bundle is compiled. A flag set later (by the command's own
 * code) changes V8's flag hash after the code cache was checked, so the cache made by that run carries the new
 * hash and every next run, started without the flag, rejects it: it compiled the whole bundle again and wrote the
 * cache again at each start (~0.2 CPU-s a batch; bench/README.md). `batch` runs long and allocates fast: its heap
 * grows by half (not V8's default of up to 4x) between full collections.
 */
const COMMAND_V8_FLAGS = { batch: ["--heap-growing-percent=50"] }

const loader = `#!/usr/bin/env node
// The parallel-llm CLI. Generated by scripts/bundle.mjs: do not edit. It runs ${BUNDLE}, the whole
// program in one file, with a V8 code cache kept in the user's cache directory: the package ships
// none, since a cache only fits the Node version that made it. Where Node has module.enableCompileCache
// (22.1 and later), Node keeps that cache itself; on older versions this loader makes one per command
// on its first run and uses it from then on. A missing, stale or rejected cache costs speed, never
// correctness.
import * as fs from "node:fs"
import * as module from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

const dir = path.dirname(fileURLToPath(import.meta.url))
const filename = path.join(dir, ${JSON.stringify(BUNDLE)})
const require = module.createRequire(filename)
const cacheRoot = () => {
  if (process.env.XDG_CACHE_HOME) return process.env.XDG_CACHE_HOME
  if (process.platform === "win32" && process.env.LOCALAPPDATA) return process.env.LOCALAPPDATA
  const home = os.homedir()
  return process.platform === "darwin" ? path.join(home, "Library", "Caches") : path.join(home, ".cache")
}
const cacheDir = path.join(cacheRoot(), "parallel-llm")

// Other builds' caches (another installed version, or an earlier build of this one): a cache is made on a miss
// and never read again once its build is gone, so each new build would add a dozen files for ever. On a miss,
// the caches of the ${KEPT_BUILDS} other builds written last stay (two versions in use do not undo each other's) and
// the rest are deleted.
const pruneOtherBuilds = () => {
  const builds = new Map()
  for (const name of fs.readdirSync(cacheDir)) {
    const build = /^([0-9a-f]{16})-.*\\.v8(\\.\\d+\\.tmp)?$/.exec(name)?.[1]
    if (build === undefined || build === ${JSON.stringify(hash)}) continue
    const file = path.join(cacheDir, name)
    const entry = builds.get(build) ?? { written: 0, files: [] }
    entry.written = Math.max(entry.written, fs.statSync(file).mtimeMs)
    entry.files.push(file)
    builds.set(build, entry)
  }
  const stale = [...builds.values()].sort((a, b) => b.written - a.written).slice(${KEPT_BUILDS})
  for (const entry of stale) for (const file of entry.files) fs.rmSync(file, { force: true })
}

// The command, as far as the loader needs it: each compiles a different part of the program during its start-up.
const command = process.argv.slice(2).find((arg) => !arg.startsWith("-")) ?? process.argv[2] ?? "none"
// Its V8 flags (see COMMAND_V8_FLAGS in scripts/bundle.mjs), before anything is compiled or read from a cache.
const flagsOf = ${JSON.stringify(COMMAND_V8_FLAGS)}
// node:v8 is loaded only for a command that has flags (~1 ms of every other command's start-up).
const flags = Object.hasOwn(flagsOf, command) ? flagsOf[command] : []
for (const flag of flags) require("node:v8").setFlagsFromString(flag)

if (typeof module.enableCompileCache === "function") {
  module.enableCompileCache(cacheDir)
  require(filename)
} else {
  // One cache per command.
  const key = /^[a-z-]{1,20}$/.test(command) ? command : "other"
  const cacheFile = path.join(cacheDir, \`${hash}-\${process.version}-\${process.arch}-\${key}.v8\`)
  let cachedData
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const source = fs.readFileSync(filename, "utf8")
  const script = new vm.Script(\`(function (exports, require, module, __filename, __dirname) {\${source}\\n})\`, {
    filename,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER
  })
  if (cachedData === undefined || script.cachedDataRejected) {
    // Written once start-up is over (what it compiled is what the cache holds), or at exit if sooner.
    let written = false
    const write = () => {
      if (written) return
      written = true
      try {
        fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 })
        const temp = \`\${cacheFile}.\${process.pid}.tmp\`
        fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 })
        fs.renameSync(temp, cacheFile)
      } catch {
        // A read-only or full cache directory: the next run compiles again.
      }
      try {
        pruneOtherBuilds()
      } catch {
        // Another process pruned at the same moment, or the directory is read-only: the next miss tries again.
      }
    }
    setTimeout(write, 2000).unref()
    process.once("exit", write)
  }
  const module_ = { exports: {} }
  script.runInThisContext()(module_.exports, require, module_, filename, dir)
}
`

fs.mkdirSync(dist, { recursive: true })
// Caches of earlier builds, from when the package shipped one.
for (const name of fs.readdirSync(dist)) {
  if (name.startsWith(`${BUNDLE}.`) && name.endsWith(".cache")) fs.rmSync(path.join(dist, name), { force: true })
}
// tsc's map of the module it emitted as dist/main.js, which the loader replaces.
fs.rmSync(path.join(dist, "main.js.map"), { force: true })
writeAtomic(path.join(dist, BUNDLE), code)
writeAtomic(path.join(dist, PLOT), plot.outputFiles[0].text)
writeAtomic(path.join(dist, "viewer.html"), viewerHtml)
writeAtomic(path.join(dist, "main.js"), loader)
fs.chmodSync(path.join(dist, "main.js"), 0o755)
process.stdout.write(`bundle: dist/${BUNDLE} ${(fs.statSync(path.join(dist, BUNDLE)).size / 1024).toFixed(0)} KB\n`)
