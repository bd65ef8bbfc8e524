import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { npmEnv, runCommand } from "../support/commands.js"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { bearer, connectHttp, READY } from "../support/httpHarness.js"
import { nodesUnderTest, withNodeOnPath } from "../support/nodeVersions.js"
import { ensureBuilt, repoRoot, withCodeCache } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { waitFor } from "../support/waitFor.js"

// The npm package as a user gets it: `npm pack`, then `npm install ./parallel-llm-mcp-*.tgz` into an empty
// directory, offline, with a scratch npm cache (the CLI bundles its dependencies, so the tarball needs nothing
// else), then the installed bin; and `npx -y <tarball> serve`, the README's client configs with the registry
// name swapped for the tarball. The build is `npm test`'s own (or ensureBuilt's): packing skips `prepare`.
// What a user runs (the bin, `ask`, `serve` over stdio and HTTP) runs on each Node of `nodesUnderTest`: the one
// running the tests and Node 24, put first on PATH, where the bin's `#!/usr/bin/env node` and npx find it.
// Installed once, the package's checks run at the same time (each in its own directory): most of their time is spent
// waiting on processes starting. Side by side on a loaded machine each takes longer than alone: their time limits
// are those of the whole group.
const CONCURRENT = { timeout: 180_000 }

const KEY = "sk-or-v1-PACKAGE-SECRET-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
const SYNTH_ANSWER = "# From the installed package\n\nIt works."

interface PackedFile {
  readonly path: string
}
interface PackResult {
  readonly filename: string
  readonly files: ReadonlyArray<PackedFile>
}
interface PackageJson {
  readonly name: string
  readonly version: string
  readonly mcpName?: string
  readonly bin?: Readonly<Record<string, string>>
  readonly files?: ReadonlyArray<string>
  readonly engines?: Readonly<Record<string, string>>
  readonly repository?: { readonly url: string }
  readonly keywords?: ReadonlyArray<string>
  readonly dependencies?: Readonly<Record<string, string>>
}

const readJson = <A>(file: string): A => JSON.parse(fs.readFileSync(file, "utf8")) as A
const source = readJson<PackageJson>(path.join(repoRoot, "package.json"))
const serverJson = readJson<{ readonly name: string }>(path.join(repoRoot, "server.json"))

const { root: tmp } = tempRoot("pllm-package-")
const app = path.join(tmp, "app")
// The installed bin keeps its code cache where the runner's own runs do (see spawnCli's `withCodeCache`): a scratch one
// would have every command of each Node compile the whole bundle again. npm reads nothing there.
const env = withCodeCache(npmEnv(tmp))
let fake: FakeOpenRouter
let packed: PackResult
let tarball: string
let installOutput = ""

const installedRoot = path.join(app, "node_modules", source.name)
const installedBin = path.join(app, "node_modules", ".bin", "parallel-llm")

beforeAll(async () => {
  ensureBuilt()
  fake = await startFakeOpenRouter({ script: { "pkg/synth": { kind: "ok", content: SYNTH_ANSWER } } })
  const pack = await runCommand("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], { cwd: repoRoot, env })
  expect(pack.code, pack.stderr).toBe(0)
  const results = JSON.parse(pack.stdout) as ReadonlyArray<PackResult>
  packed = results[0]!
  tarball = path.join(tmp, packed.filename)
  fs.mkdirSync(app)
  const install = await runCommand("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: app, env })
  installOutput = install.stdout + install.stderr
  expect(install.code, installOutput).toBe(0)
})

afterAll(async () => {
  await fake?.close()
})

describe.concurrent("the npm package, packed and installed from its tarball", CONCURRENT, () => {
  it("ships the built CLI and its metadata, no sources, maps or code caches", () => {
    const files = packed.files.map((file) => file.path).sort()
    expect(files).toContain("package.json")
    expect(files).toContain("README.md")
    expect(files).toContain("LICENSE")
    for (const target of Object.values(source.bin ?? {})) expect(files).toContain(target)
    for (const file of files) {
      // data/: eval's built-in datasets, each with its licence.
      const shipped = ["package.json", "README.md", "LICENSE"].includes(file) || file.startsWith("dist/") || file.startsWith("data/")
      expect(shipped, file).toBe(true)
      expect(file, "no source maps, declarations or V8 code caches in the package").not.toMatch(/\.(map|d\.ts|cache)$/)
    }
  })

  it("declares what npm, npx and the MCP registry read", () => {
    const installed = readJson<PackageJson>(path.join(installedRoot, "package.json"))
    expect(installed.bin).toEqual({ "parallel-llm": "dist/main.js" })
    expect(installed.engines?.node).toMatch(/^>=\d+/)
    expect(installed.files?.length).toBeGreaterThan(0)
    expect(installed.keywords).toContain("mcp")
    expect(installed.repository?.url).toMatch(/^git\+https:\/\/github\.com\/[^/]+\/parallel-llm-mcp\.git$/)
    // The registry checks that the npm package names the server.json it is published with.
    expect(installed.mcpName).toBe(serverJson.name)
    expect(Object.keys(installed.dependencies ?? {}), "the CLI bundles its dependencies").toEqual([])
  })

  it("installs offline into an empty directory: itself and nothing else, no build step run", () => {
    expect(fs.readdirSync(path.join(app, "node_modules")).filter((name) => !name.startsWith("."))).toEqual([source.name])
    expect(installOutput).toMatch(/added 1 package/)
    // npm lists `prepare` among the scripts it skipped for a tarball, but never runs it for one: nothing was built.
    expect(fs.existsSync(path.join(installedRoot, "src"))).toBe(false)
    expect(fs.existsSync(path.join(installedRoot, "dist", "main.js"))).toBe(true)
  })

  it("runs parallel-llm --help from the installed bin", async () => {
    const help = await runCommand(installedBin, ["--help"], { cwd: app, env })
    expect(help.code, help.stderr).toBe(0)
    for (const command of ["ask", "serve", "models", "config"]) expect(help.stdout).toContain(`- ${command}`)
  })

  it("runs parallel-llm eval --dataset gsm8k --baselines-only from the data it ships, without a key", async () => {
    expect(fs.existsSync(path.join(installedRoot, "data", "gsm8k-LICENSE.txt"))).toBe(true)
    const result = await runCommand(installedBin, ["eval", "--dataset", "gsm8k", "--baselines-only", "--json"], { cwd: app, env })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ items: 1319, baselines: { oracle: { correct: 887, n: 1319 } } })
  })
})

for (const node of nodesUnderTest) {
  const title = node.skipped === undefined ? node.label : `${node.label} (skipped: ${node.skipped})`
  describe.skipIf(node.skipped !== undefined).concurrent(`the installed package, run on ${title}`, CONCURRENT, () => {
    // The client's environment, this Node first on PATH; the provider and the key.
    let clientEnv: Record<string, string>
    let binary: string
    const slug = node.label.replace(/\W+/g, "-")

    beforeAll(async () => {
      binary = await node.binary()
      // An npm cache of its own: the Nodes' `npx -y` run at once, and two installs into one npx cache could collide.
      clientEnv = {
        ...withNodeOnPath(binary, env),
        npm_config_cache: path.join(tmp, `npm-cache-${slug}`),
        OPENROUTER_BASE_URL: fake.url,
        OPENROUTER_API_KEY: KEY
      }
    }, 300_000)

    it("runs the installed bin on this Node: parallel-llm --version", async () => {
      const which = await runCommand("node", ["-p", "process.execPath"], { cwd: app, env: clientEnv })
      expect(which.stdout.trim(), "the node the bin's #!/usr/bin/env finds").toBe(binary)
      const version = await runCommand(installedBin, ["--version"], { cwd: app, env: clientEnv })
      expect(version.code, version.stderr).toBe(0)
      expect(version.stdout.trim()).toBe(source.version)
    })

    it("runs parallel-llm ask against the loopback provider", async () => {
      const out = path.join(tmp, `runs-${slug}`)
      const args = ["ask", "Does the package work?", "-m", "pkg/one", "-m", "pkg/two", "-s", "pkg/synth"]
      const result = await runCommand(installedBin, args, {
        cwd: app,
        env: { ...clientEnv, PARALLEL_LLM_OUTPUT_DIR: out, PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none" }
      })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe(`${SYNTH_ANSWER}\n`)
      expect(result.stderr).not.toContain(KEY)
      const [runId] = fs.readdirSync(out)
      expect(fs.readFileSync(path.join(out, runId!, "final.md"), "utf8")).toBe(SYNTH_ANSWER)
    })

    it("serves MCP over stdio through npx -y <package> serve", async () => {
      const transport = new StdioClientTransport({
        command: "npx",
        // A bare absolute path would be taken for a command to run: `file:` makes it a package spec.
        args: ["--yes", "--offline", `file:${tarball}`, "serve"],
        cwd: app,
        env: { ...clientEnv, PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, `serve-runs-${slug}`) },
        stderr: "pipe"
      })
      const client = new Client({ name: "package-test", version: "1.0.0" })
      await client.connect(transport)
      try {
        expect(client.getServerVersion()?.version).toBe(source.version)
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name)).toContain("process_prompt")
      } finally {
        await client.close()
      }
    })

    it("serves MCP over HTTP from the installed bin: parallel-llm serve --http", async () => {
      const server = spawn(installedBin, ["serve", "--http", "--port", "0"], {
        cwd: app,
        env: { ...clientEnv, PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, `http-runs-${slug}`) },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      server.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      let closed = false
      const exited = new Promise<void>((resolve) =>
        server.on("close", () => {
          closed = true
          resolve()
        })
      )
      try {
        const [, url = "", token = ""] = await waitFor("the server's URL on stderr", () => {
          if (closed) throw new Error(`serve --http exited before listening:\n${stderr}`)
          return READY.exec(stderr) ?? undefined
        }, CONCURRENT.timeout)
        expect(token, `the token it generated, on stderr: ${stderr}`).not.toBe("")
        const http = await connectHttp(url, bearer(token))
        try {
          expect(http.client.getServerVersion()?.version).toBe(source.version)
          const { tools } = await http.client.listTools()
          expect(tools.map((tool) => tool.name)).toContain("process_prompt")
        } finally {
          await http.close()
        }
      } finally {
        server.kill("SIGTERM")
        await exited
      }
    })
  })
}
