import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCommand } from "../support/commands.js"
import { ensureBuilt, listTree, repoRoot, withCodeCache } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"

// The MCP Bundle for Claude Desktop: manifest.json passes `mcpb validate`, `scripts/bundle-mcpb.mjs` (what
// `npm run bundle:mcpb` runs after the build) packs a bundle, and the unpacked bundle's server, started the way a
// host starts it (mcp_config with ${__dirname} and ${user_config.*} filled in), lists exactly the manifest's tools
// and takes the user's settings.

interface UserConfigField {
  readonly type: string
  readonly sensitive?: boolean
  readonly required?: boolean
  readonly default?: string
}
interface Manifest {
  readonly version: string
  readonly server: {
    readonly mcp_config: { readonly command: string; readonly args: ReadonlyArray<string>; readonly env: Readonly<Record<string, string>> }
  }
  readonly tools: ReadonlyArray<{ readonly name: string; readonly description?: string }>
  readonly user_config: Readonly<Record<string, UserConfigField>>
}

const KEY = "sk-or-v1-MCPB-SECRET-a1b2c3d4e5f60718293a4b5c6d7e8f90"
const mcpbCli = path.join(repoRoot, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js")
const manifestFile = path.join(repoRoot, "manifest.json")
const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8")) as Manifest
const { root: tmp } = tempRoot("pllm-mcpb-")
// The bundle's server keeps its code cache where the runner's own runs do (see spawnCli's `withCodeCache`).
const env = withCodeCache({ PATH: process.env.PATH ?? "", HOME: tmp })
const unpacked = path.join(tmp, "unpacked")

const mcpb = (args: ReadonlyArray<string>) => runCommand(process.execPath, [mcpbCli, ...args], { cwd: tmp, env })

/** What a conformant host does with mcp_config: ${__dirname} is the bundle, an unset field takes its default. */
const fill = (text: string, userConfig: Readonly<Record<string, string>>): string =>
  text
    .replaceAll("${__dirname}", unpacked)
    .replace(/\$\{user_config\.(\w+)\}/g, (_, key: string) => userConfig[key] ?? manifest.user_config[key]?.default ?? "")

/** The unpacked bundle's server, started as the manifest says, behind the SDK's client. */
const connectBundle = async (userConfig: Readonly<Record<string, string>>): Promise<Client> => {
  const config = manifest.server.mcp_config
  expect(config.command).toBe("node")
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: config.args.map((arg) => fill(arg, userConfig)),
    cwd: tmp,
    // A closed loopback port: nothing here calls a model.
    env: {
      ...env,
      OPENROUTER_BASE_URL: "http://127.0.0.1:9/api/v1",
      ...Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, fill(v, userConfig)]))
    },
    stderr: "pipe"
  })
  const client = new Client({ name: "mcpb-test", version: "1.0.0" })
  await client.connect(transport)
  return client
}

const effectiveConfig = async (client: Client): Promise<Record<string, unknown>> => {
  const result = await client.callTool({ name: "get_config", arguments: {} })
  expect(result.isError ?? false).toBe(false)
  return result.structuredContent as Record<string, unknown>
}

beforeAll(async () => {
  ensureBuilt()
  const bundle = path.join(tmp, "parallel-llm-mcp.mcpb")
  const built = await runCommand(process.execPath, [path.join(repoRoot, "scripts", "bundle-mcpb.mjs"), bundle], { cwd: repoRoot, env })
  expect(built.code, built.stdout + built.stderr).toBe(0)
  const unpack = await mcpb(["unpack", bundle, unpacked])
  expect(unpack.code, unpack.stderr).toBe(0)
})

/** The bundle's server with the user's key and every other field left to its default: one process for the tests. */
let withDefaults: Promise<Client> | undefined
const connectWithDefaults = () => (withDefaults ??= connectBundle({ api_key: KEY }))

afterAll(async () => {
  await (await withDefaults)?.close()
})

// Each test its own files or processes: they run at the same time, most of it waiting on processes starting (side by
// side on a loaded machine each takes longer than alone: their time limit is the group's).
describe.concurrent("the MCP Bundle (manifest.json, npm run bundle:mcpb)", { timeout: 180_000 }, () => {
  it("manifest.json passes mcpb validate, and a broken copy does not", async () => {
    const broken = path.join(tmp, "broken.json")
    fs.writeFileSync(broken, JSON.stringify({ ...manifest, server: { ...manifest.server, type: "deno" } }))
    const [valid, refused] = await Promise.all([mcpb(["validate", manifestFile]), mcpb(["validate", broken])])
    expect(valid.code, valid.stdout + valid.stderr).toBe(0)
    expect(refused.code).not.toBe(0)
  })

  it("asks for the API key as a secret, and for the models, the synthesizer and the output directory", () => {
    expect(manifest.user_config.api_key).toMatchObject({ type: "string", sensitive: true, required: true })
    expect(manifest.user_config.output_dir?.type).toBe("directory")
    expect(Object.keys(manifest.user_config).sort()).toEqual(["api_key", "models", "output_dir", "synthesizer"])
    // Hosts that get no value for an optional field substitute its default: "" is read as "not set".
    for (const [key, field] of Object.entries(manifest.user_config)) {
      if (field.required !== true) expect(field.default, key).toBe("")
    }
  })

  it("holds the files npm publishes plus the manifest, no node_modules", () => {
    expect(listTree(unpacked)).toEqual([
      "LICENSE",
      "README.md",
      "data/README.md",
      "data/gsm8k-LICENSE.txt",
      "data/gsm8k-frozen-candidates.jsonl",
      "dist/main.js",
      "dist/parallel-llm.cjs",
      "dist/plot.cjs",
      "dist/viewer.html",
      "manifest.json",
      "package.json"
    ])
  })

  it("its server lists exactly the tools the manifest declares, in order", async () => {
    const client = await connectWithDefaults()
    expect(client.getServerVersion()?.version).toBe(manifest.version)
    const { tools } = await client.listTools()
    expect(manifest.tools).toEqual(tools.map((tool) => ({ name: tool.name, description: tool.description ?? "" })))
  })

  it("its server runs with the user's models, synthesizer and output directory, and with the defaults", async () => {
    const outputDir = path.join(tmp, "runs")
    const [configured, defaults] = await Promise.all([
      connectBundle({ api_key: KEY, models: "a/one,b/two", synthesizer: "c/synth", output_dir: outputDir }),
      connectWithDefaults()
    ])
    try {
      const mine = await effectiveConfig(configured)
      expect(mine).toMatchObject({ models: ["a/one", "b/two"], synthesizer: "c/synth", outputDir })
      expect(JSON.stringify(mine)).not.toContain(KEY)
      const fallback = await effectiveConfig(defaults)
      expect((fallback.models as ReadonlyArray<string>).length).toBeGreaterThan(0)
      expect(fallback.outputDir).not.toBe("")
    } finally {
      await configured.close()
    }
  })
})
