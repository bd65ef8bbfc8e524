// `npm run lint`: oxlint (the rules) and dprint (the formatting), both always run so one report shows every finding;
// fails if either found something. `npm run lint:fix` (`--fix`): dprint formats, then oxlint applies its fixes.
import { spawnSync } from "node:child_process"

const fix = process.argv.includes("--fix")
const steps = fix ? [["dprint", "fmt"], ["oxlint", "--fix"]] : [["oxlint"], ["dprint", "check"]]
let failed = false
for (const [command, ...args] of steps) {
  // npm puts node_modules/.bin on PATH; Windows finds its .cmd shims only through a shell.
  const result = spawnSync(command, args, { stdio: "inherit", shell: process.platform === "win32" })
  if (result.error) console.error(`${command}: ${result.error.message} (is it installed? npm ci installs it)`)
  failed ||= result.status !== 0
}
process.exitCode = failed ? 1 : 0
