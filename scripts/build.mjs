// `npm run build`: emits dist/ (tsc, without type-checking: `npm run typecheck` checks src, test and bench in one
// pass, and `npm test` runs it), then bundles the CLI (scripts/bundle.mjs). A build that succeeds records a hash of
// its inputs in dist/.build-inputs (scripts/buildInputs.mjs); with `--if-stale` (what vitest's global setup runs when
// that hash no longer matches, test/support/freshBuild.ts) nothing is rebuilt while it still matches, so the build that
// `npm ci` ran is not repeated, and any edit to an input builds again.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { inputsHash, stampFile, upToDate } from "./buildInputs.mjs"
import { rewriteModulesUnder } from "./effectIndexes.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = path.join(root, "dist")
const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc")
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
  // The tests import dist/'s modules: each imports what it uses, not the packages' index modules (effectIndexes.mjs).
  rewriteModulesUnder(dist)
  step(path.join(root, "scripts", "bundle.mjs"), [])
  fs.writeFileSync(stampFile, hash)
}
