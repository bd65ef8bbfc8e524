// `npm run build`: emits dist/ (tsc, without type-checking: `npm run typecheck` checks src, test and bench in one
// pass, and `npm test` runs it), then bundles the CLI (scripts/bundle.mjs). A build that succeeds records a hash of
// its inputs in dist/.build-inputs; with `--if-stale` (what vitest's global setup runs, test/support/freshBuild.ts)
// nothing is rebuilt while that hash still matches, so the build that `npm ci` ran is not repeated, and any edit to an
// input builds again.
import { spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")
const stampFile = path.join(dist, ".build-inputs")
const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc")
/** What the build reads besides node_modules, whose versions package-lock.json fixes. */
const inputs = [
  "src",
  "scripts/build.mjs",
  "scripts/bundle.mjs",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json"
]
/** What the CLI and its tests need from a build: a missing one means building again, whatever the hash says. */
const outputs = ["main.js", "parallel-llm.cjs", "plot.cjs", "viewer.html"]

/** Every file under `entry` (or `entry` itself), as paths relative to the root, sorted. */
const filesOf = (entry) => {
  const full = path.join(root, entry)
  if (!fs.existsSync(full)) return []
  if (!fs.statSync(full).isDirectory()) return [entry]
  return fs.readdirSync(full).sort().flatMap((name) => filesOf(path.join(entry, name)))
}

/** A hash of every input's path and content: renaming, adding or editing any of them changes it. */
const inputsHash = () => {
  const hash = crypto.createHash("sha256")
  for (const file of inputs.flatMap(filesOf)) hash.update(`${file}\0`).update(fs.readFileSync(path.join(root, file))).update("\0")
  return hash.digest("hex")
}

const upToDate = (hash) =>
  outputs.every((file) => fs.existsSync(path.join(dist, file))) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === hash

/** Runs a node script with the build's own output; stops the build when it fails. */
const step = (script, args) => {
  const result = spawnSync(process.execPath, [script, ...args], { cwd: root, stdio: "inherit" })
  if (result.error) console.error(`build: ${script}: ${result.error.message}`)
  if (result.status !== 0) process.exit(result.status ?? 1)
}

// Read before building, so that an edit made while it runs still counts as one next time.
const hash = inputsHash()
if (process.argv.includes("--if-stale") && upToDate(hash)) {
  console.log("build: dist/ is up to date with src/ (nothing to do)")
} else {
  fs.rmSync(stampFile, { force: true })
  // One thread: with two cores tsc's parallel emit costs more CPU than it saves time.
  step(tsc, ["-p", "tsconfig.build.json", "--noCheck", "--singleThreaded"])
  step(path.join(root, "scripts", "bundle.mjs"), [])
  fs.writeFileSync(stampFile, hash)
}
