// Keeps the two install manifests in step with their sources, so each fact has one home:
//   manifest.json (MCP Bundle): `version` from package.json, `tools` from the built server's own tools/list
//   server.json (MCP registry): `version` and the npm package's `version` from package.json
// `node scripts/sync-manifests.mjs` rewrites them (`npm run sync:manifests` builds first);
// `--check` writes nothing and exits 1 naming what is stale.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const readJson = (name) => JSON.parse(fs.readFileSync(path.join(root, name), "utf8"))

/** The built server's tools as the MCP Bundle manifest lists them: name and description. */
export const serverTools = async (entry = path.join(root, "dist", "main.js")) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-tools-"))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [entry, "serve"],
    // Listing tools makes no upstream call: a closed loopback port and a scratch output directory.
    env: {
      PATH: process.env.PATH ?? "",
      HOME: scratch,
      OPENROUTER_BASE_URL: "http://127.0.0.1:9/api/v1",
      PARALLEL_LLM_OUTPUT_DIR: scratch,
      PARALLEL_LLM_LOG_LEVEL: "error"
    },
    stderr: "ignore"
  })
  const client = new Client({ name: "sync-manifests", version: "1.0.0" })
  try {
    await client.connect(transport)
    const { tools } = await client.listTools()
    return tools.map((tool) => ({ name: tool.name, description: tool.description ?? "" }))
  } finally {
    await client.close()
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** The two manifests as they should be; `tools` as `serverTools` gives them. */
export const expectedManifests = (tools) => {
  const { version } = readJson("package.json")
  const bundle = readJson("manifest.json")
  const registry = readJson("server.json")
  return {
    "manifest.json": { ...bundle, version, tools },
    "server.json": { ...registry, version, packages: registry.packages.map((p) => ({ ...p, version })) }
  }
}

const main = async () => {
  const check = process.argv.includes("--check")
  const expected = expectedManifests(await serverTools())
  const stale = []
  for (const [name, value] of Object.entries(expected)) {
    const text = `${JSON.stringify(value, null, 2)}\n`
    if (fs.readFileSync(path.join(root, name), "utf8") === text) continue
    stale.push(name)
    if (!check) fs.writeFileSync(path.join(root, name), text)
  }
  if (check && stale.length > 0) {
    process.stderr.write(`stale: ${stale.join(", ")} (run: npm run sync:manifests)\n`)
    process.exit(1)
  }
  process.stdout.write(stale.length === 0 ? "manifests up to date\n" : `updated: ${stale.join(", ")}\n`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main()
