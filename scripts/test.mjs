// `npm test`: type-checks and runs the unit and e2e tiers at the same time (vitest's global setup first builds dist/
// if an input changed since the last build, test/support/freshBuild.ts): vitest leaves the cores idle while its tests
// wait on the processes they spawn, and the type-check fills them. vitest prints as it goes; the type-check's findings
// come after it, under a heading of their own. Either failing fails the command. Arguments go to vitest
// (`npm test -- test/unit/x.test.ts`).
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const require = createRequire(import.meta.url)
const binOf = (pkg, bin) => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), bin)

/**
 * Runs a node script to its end; `quiet` keeps its output for later instead of printing it, `priority` is its
 * niceness (0, the default, to 19: runs only when nothing else wants the core).
 */
const run = (script, args, quiet, priority = 0) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit" })
    if (priority !== 0 && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, priority)
      } catch {
        // Not allowed here: it runs at the normal priority, only slower beside vitest.
      }
    }
    let output = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk) => (output += chunk))
    child.stderr?.setEncoding("utf8").on("data", (chunk) => (output += chunk))
    child.on("error", (error) => resolve({ code: 1, output: `${error.message}\n` }))
    child.on("close", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output }))
  })

// `npm run typecheck`'s own command line (package.json says it once), run without a second npm. One thread: beside
// vitest's workers, tsc's parallel checkers cost more CPU (18 s against 10 on two cores) than they save time. At the
// lowest priority: vitest runs one tier after the other (in either order), the unit tier keeping both cores busy and
// the e2e tier leaving them idle while its tests wait on the processes they spawn; tsc fills those gaps instead of
// slowing the unit tier (cold, it takes 6 CPU-s; with its .tmp/typecheck.tsbuildinfo, 2).
const { scripts } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
const [typecheckCommand, ...typecheckArgs] = scripts.typecheck.split(" ")
if (typecheckCommand !== "tsc") throw new Error(`scripts.typecheck runs ${typecheckCommand}, not tsc: update scripts/test.mjs`)
const [typecheck, vitest] = await Promise.all([
  run(binOf("typescript", "bin/tsc"), [...typecheckArgs, "--singleThreaded"], true, 19),
  run(binOf("vitest", "vitest.mjs"), ["run", "--project", "unit", "--project", "e2e", ...process.argv.slice(2)], false)
])
const findings = typecheck.output.trim()
console.log(typecheck.code === 0 ? "\ntypecheck (tsc --noEmit): no errors" : `\ntypecheck (tsc --noEmit) failed:\n${findings}`)
process.exitCode = typecheck.code !== 0 || vitest.code !== 0 ? 1 : 0
