// `npm run test:agents`: the agents tier (test/agents/), the vendors' CLI agents (Claude Code, Codex, Gemini CLI) run
// against loopback fakes of their APIs. Installs the CLIs at the versions pinned in test/agents/tools/ (its own
// package-lock.json) when they are missing, then runs the tier's vitest project, which a plain `vitest run` leaves out.
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

const tools = join("test", "agents", "tools")
const pinned = JSON.parse(readFileSync(join(tools, "package.json"), "utf8")).dependencies
const installedVersion = (name) => {
  const manifest = join(tools, "node_modules", name, "package.json")
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).version : undefined
}
const stale = Object.entries(pinned).filter(([name, version]) => installedVersion(name) !== version)
const shell = process.platform === "win32"
if (stale.length > 0) {
  console.log(`agents tier: installing ${stale.map(([n, v]) => `${n}@${v}`).join(", ")} into ${tools}`)
  const started = Date.now()
  const install = spawnSync("npm", ["ci", "--prefix", tools, "--no-audit", "--no-fund"], { stdio: "inherit", shell })
  if (install.status !== 0) process.exit(install.status ?? 1)
  console.log(`agents tier: installed in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
const run = spawnSync(
  "npx",
  ["vitest", "run", "--project", "agents", ...process.argv.slice(2)],
  { stdio: "inherit", shell, env: { ...process.env, PARALLEL_LLM_AGENTS_TIER: "1" } }
)
process.exit(run.status ?? 1)
