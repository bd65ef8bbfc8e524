// Whether dist/ is the build of the inputs as they are now: `npm run build` (scripts/build.mjs) records a hash of its
// inputs in dist/.build-inputs when it succeeds, and vitest's global setup (test/support/freshBuild.ts) asks here
// before it starts a build, so a run whose dist/ is current costs no process.
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")
export const stampFile = path.join(dist, ".build-inputs")

/** What the build reads besides node_modules, whose versions package-lock.json fixes. */
const inputs = [
  "src",
  "scripts/build.mjs",
  "scripts/buildInputs.mjs",
  "scripts/bundle.mjs",
  "scripts/effectIndexes.mjs",
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
export const inputsHash = () => {
  const hash = crypto.createHash("sha256")
  for (const file of inputs.flatMap(filesOf)) hash.update(`${file}\0`).update(fs.readFileSync(path.join(root, file))).update("\0")
  return hash.digest("hex")
}

/** dist/ holds every output, built from inputs whose hash is `hash`. */
export const upToDate = (hash = inputsHash()) =>
  outputs.every((file) => fs.existsSync(path.join(dist, file))) && fs.existsSync(stampFile) &&
  fs.readFileSync(stampFile, "utf8") === hash
