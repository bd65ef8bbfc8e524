// Builds the MCP Bundle for Claude Desktop, parallel-llm-mcp.mcpb (or the path given as the first argument),
// from the built package: exactly the files npm publishes (`npm pack --dry-run`, so the bundle and the npm
// package never differ) plus manifest.json, packed by `mcpb pack`, which validates the manifest.
// The CLI bundles its dependencies (scripts/bundle.mjs), so the bundle needs no node_modules.
// Run after `npm run build`; `npm run bundle:mcpb` does both.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { expectedManifests, root, serverTools } from "./sync-manifests.mjs"

const output = path.resolve(process.argv[2] ?? path.join(root, "parallel-llm-mcp.mcpb"))
// Under `npm run`, npm's own CLI script (spawning npm.cmd on Windows needs a shell); else npm from PATH.
const npm = (args) => process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath, ...args]] : ["npm", args]
const mcpb = path.join(root, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js")

const fail = (message) => {
  process.stderr.write(`bundle:mcpb: ${message}\n`)
  process.exit(1)
}

const entry = path.join(root, "dist", "main.js")
if (!fs.existsSync(entry)) fail("dist/main.js is missing: run npm run build (or npm run bundle:mcpb)")

// A bundle whose manifest lists other tools than its server has, or another version, is refused.
const manifest = JSON.parse(fs.readFileSync(path.join(root, "manifest.json"), "utf8"))
const expected = expectedManifests(await serverTools(entry))["manifest.json"]
if (JSON.stringify(manifest) !== JSON.stringify(expected)) fail("manifest.json is stale (tools or version): run npm run sync:manifests")

const [packed] = JSON.parse(execFileSync(...npm(["pack", "--dry-run", "--json", "--ignore-scripts"]), { cwd: root, encoding: "utf8" }))
const stage = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-mcpb-stage-"))
for (const { path: file } of [...packed.files, { path: "manifest.json" }]) {
  fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true })
  fs.copyFileSync(path.join(root, file), path.join(stage, file))
}
fs.mkdirSync(path.dirname(output), { recursive: true })
execFileSync(process.execPath, [mcpb, "pack", ".", output], { cwd: stage, stdio: ["ignore", "inherit", "inherit"] })
fs.rmSync(stage, { recursive: true, force: true })
