import { Ajv } from "ajv"
import addFormats from "ajv-formats"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { repoRoot } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"

// server.json, the entry for the official MCP registry, against the registry's published schema (vendored in
// test/fixtures/mcp-registry, see its README), and the facts it shares with package.json and manifest.json:
// name, version, repository, and environment variables that are the CLI's own settings.

interface EnvironmentVariable {
  readonly name: string
  readonly isRequired?: boolean
  readonly isSecret?: boolean
  readonly format?: string
}
interface ServerJson {
  readonly $schema: string
  readonly name: string
  readonly version: string
  readonly description: string
  readonly repository: { readonly url: string; readonly source: string }
  readonly packages: ReadonlyArray<{
    readonly registryType: string
    readonly identifier: string
    readonly version: string
    readonly transport: { readonly type: string }
    readonly packageArguments: ReadonlyArray<{ readonly type: string; readonly value?: string }>
    readonly environmentVariables: ReadonlyArray<EnvironmentVariable>
  }>
}

const readJson = <A>(file: string): A => JSON.parse(fs.readFileSync(path.join(repoRoot, file), "utf8")) as A
const serverJson = readJson<ServerJson>("server.json")
const schema = readJson<{ readonly $id: string }>("test/fixtures/mcp-registry/server.schema.json")
const pkg = readJson<{ name: string; version: string; mcpName: string; repository: { url: string } }>("package.json")
const manifest = readJson<{ version: string; repository: { url: string }; server: { mcp_config: { env: Record<string, string> } } }>(
  "manifest.json"
)
const npmPackage = serverJson.packages.find((p) => p.registryType === "npm")

const validator = () => {
  const ajv = new Ajv({ allErrors: true })
  // The registry's schema carries OpenAPI's `example` annotations; strict mode rejects unknown keywords.
  ajv.addVocabulary(["example"])
  // CommonJS seen from ESM: the default import is `module.exports`, which carries the plugin as `default` too.
  addFormats.default(ajv)
  return ajv.compile(schema)
}

const { root: tmp } = tempRoot("pllm-serverjson-")

describe("server.json (the MCP registry entry)", () => {
  it("is valid against the registry's published schema, which rejects what the registry rejects", () => {
    expect(serverJson.$schema).toBe(schema.$id)
    const validate = validator()
    expect(validate(serverJson), JSON.stringify(validate.errors, null, 2)).toBe(true)
    const latest = { ...serverJson, packages: serverJson.packages.map((p) => ({ ...p, version: "latest" })) }
    expect(validate(latest)).toBe(false)
    expect(validate({ ...serverJson, description: "x".repeat(101) })).toBe(false)
    expect(validate({ ...serverJson, name: "no-namespace" })).toBe(false)
  })

  it("names the npm package, its version and its repository as package.json and manifest.json do", () => {
    expect(serverJson.name).toBe(pkg.mcpName)
    expect(serverJson.name).toMatch(/^io\.github\.[^/]+\/parallel-llm-mcp$/)
    expect(npmPackage).toMatchObject({ identifier: pkg.name, version: pkg.version, transport: { type: "stdio" } })
    expect(npmPackage?.packageArguments).toEqual([expect.objectContaining({ type: "positional", value: "serve" })])
    expect(serverJson.version).toBe(pkg.version)
    expect(manifest.version).toBe(pkg.version)
    // The io.github.<owner> namespace is proved by owning the repository it names.
    const owner = serverJson.name.slice("io.github.".length, serverJson.name.indexOf("/"))
    const repository = `https://github.com/${owner}/parallel-llm-mcp`
    expect(serverJson.repository).toEqual({ url: repository, source: "github" })
    expect(pkg.repository.url).toBe(`git+${repository}.git`)
    expect(manifest.repository.url).toBe(repository)
  })

  it("marks the API key secret, and every variable it or the bundle sets is a setting the CLI reads", async () => {
    const variables = npmPackage?.environmentVariables ?? []
    expect(variables.find((v) => v.name === "OPENROUTER_API_KEY")).toMatchObject({ isRequired: true, isSecret: true })
    expect(variables.filter((v) => v.isSecret === true).map((v) => v.name)).toEqual(["OPENROUTER_API_KEY"])
    const configFile = path.join(tmp, "config.json")
    fs.writeFileSync(configFile, "{}")
    const valid: Readonly<Record<string, string>> = {
      OPENROUTER_API_KEY: "sk-or-v1-SERVERJSON-SECRET",
      OPENROUTER_BASE_URL: "http://127.0.0.1:9/api/v1",
      PARALLEL_LLM_MODELS: "a/one,b/two",
      PARALLEL_LLM_SYNTHESIZER: "c/synth",
      PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, "runs"),
      PARALLEL_LLM_CONFIG: configFile
    }
    const names = [...new Set([...variables.map((v) => v.name), ...Object.keys(manifest.server.mcp_config.env)])]
    for (const name of names) expect(valid[name], `a valid value for ${name} in this test`).toBeDefined()
    const env = { PATH: process.env.PATH ?? "", HOME: tmp, ...Object.fromEntries(names.map((name) => [name, valid[name]!])) }
    const result = await runCliInProcess(["config", "--json"], { env })
    expect(result.code, result.stderr).toBe(0)
    const rows = JSON.parse(result.stdout) as ReadonlyArray<{ readonly source: string }>
    const sources = new Set(rows.map((row) => row.source))
    for (const name of names) expect(sources.has(`env ${name}`), `${name} is read by the CLI`).toBe(true)
  })
})
