// Launcher for `npm run bench`: the bench and the loopback fake are TypeScript (the fake lives under
// test/), so esbuild — the bundler the CLI build already uses — compiles them into plain ES modules in
// a fresh directory under bench/results/ (gitignored; packages stay external and load from
// node_modules), then this script runs them. No TypeScript loader hook, no second toolchain.
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
const outdir = fs.mkdtempSync(path.join(root, "bench", "results", ".build-"))

await esbuild.build({
  absWorkingDir: root,
  entryPoints: { run: "bench/run.ts", fakeWorker: "bench/fakeWorker.ts" },
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  packages: "external",
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "inline",
  logLevel: "warning"
})

process.env.BENCH_ROOT = root
try {
  await import(pathToFileURL(path.join(outdir, "run.mjs")).href)
} finally {
  fs.rmSync(outdir, { recursive: true, force: true })
}
