import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { type CallToolResult, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { serverEnv } from "../support/mcpHarness.js"
import { repoRoot } from "../support/spawnCli.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 14 parts 1 and 2 with the command line and the MCP server in-process (the server behind the SDK's client, as
// `serve` builds it from its environment): MCP `files` are read only inside the client's roots plus --allow-dir (a
// client without roots: only --allow-dir, never the server's working directory); a path outside is refused, nothing
// sent.

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pllm-mcp-attach-")))
const write = (relative: string, text: string) => {
  const file = path.join(tmp, relative)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

const provider = withFakeProvider({ default: { kind: "ok", content: "an answer" } })
write("outside/secret.txt", "the secret\n")
write("allowed/inside.txt", "inside text\n")
write("rootA/a.txt", "text of a\n")
write("rootB/b.txt", "text of b\n")
write("cli/src/main.ts", "console.log('hi')\n")
write("cli/.gitignore", "dist/\n")
write("cli/dist/main.js", "compiled\n")
fs.writeFileSync(path.join(tmp, "cli", "shot.png"), Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2]))
fs.writeFileSync(path.join(tmp, "cli", "blob.bin"), Uint8Array.from([0, 1, 2]))
fs.symlinkSync(path.join(tmp, "outside", "secret.txt"), path.join(tmp, "allowed", "link.txt"))
afterAll(async () => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

const envFor = (extra: Record<string, string> = {}) =>
  serverEnv({
    baseUrl: provider.fake.url,
    outputDir: path.join(tmp, "runs"),
    apiKey: "sk-or-test",
    models: ["test/alpha"],
    synthesizer: "test/synth",
    extra
  })

const ask = async (client: Client, files: ReadonlyArray<string>) =>
  (await client.callTool({ name: "process_prompt", arguments: { prompt: "What is in the file?", files, wait: 30 } })) as CallToolResult
const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")
const sentToAlpha = () => JSON.stringify(provider.fake.chatRequests().find((r) => r.model === "test/alpha")?.body ?? null)

/** The server behind an SDK client that declares roots and answers `roots/list` with `roots()` (asked at a call). */
const connectWithRoots = async (roots: () => ReadonlyArray<string>) => {
  const mcp = await connectMcpInProcess(envFor(), { roots: { listChanged: true } })
  mcp.client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: roots().map((dir) => ({ uri: pathToFileURL(dir).href, name: path.basename(dir) }))
  }))
  return mcp
}

describe("ask --attach", () => {
  const cliEnv = () => ({
    PATH: process.env.PATH ?? "",
    HOME: tmp,
    OPENROUTER_BASE_URL: provider.fake.url,
    OPENROUTER_API_KEY: "sk-or-test",
    PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, "runs"),
    PARALLEL_LLM_MODELS: "test/alpha",
    PARALLEL_LLM_SYNTHESIZER: "test/synth",
    PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
  })

  it("attaches a directory's text files and an image, copies them into the run, and lists them with --json", async () => {
    provider.fake.reset()
    const result = await runCliInProcess(["ask", "Review it.", "--attach", "src", "--attach", "shot.png", "--json"], {
      env: cliEnv(),
      cwd: path.join(tmp, "cli")
    })
    expect(result.code, result.stderr).toBe(0)
    const manifest = JSON.parse(result.stdout) as { runDir: string; attachments: ReadonlyArray<{ path: string; sentAs: object }> }
    expect(manifest.attachments.map((a) => [a.path, a.sentAs])).toEqual([
      [path.join("src", "main.ts"), { "test/alpha": "text" }],
      ["shot.png", { "test/alpha": "note" }]
    ])
    expect(fs.readdirSync(path.join(manifest.runDir, "attachments")).sort()).toEqual(["01-main.ts", "02-shot.png"])
    expect(sentToAlpha()).toContain("File: src/main.ts")
    expect(sentToAlpha()).toContain("An image, shot.png, is attached")
  })

  it("refuses a binary file with exit 2 and one line naming it, before any call", async () => {
    provider.fake.reset()
    const result = await runCliInProcess(["ask", "q", "--attach", "src", "--attach", "blob.bin"], {
      env: cliEnv(),
      cwd: path.join(tmp, "cli")
    })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split("\n").at(-1)).toBe(
      "parallel-llm: --attach: blob.bin is a binary file (only text, PNG, JPEG, WebP, GIF and PDF files can be attached)"
    )
    expect(provider.fake.requests).toHaveLength(0)
  })
})

describe("where MCP files may be read from", () => {
  it("without roots: not even the server's working directory; the refusal says how to allow a directory, nothing sent", async () => {
    const mcp = await connectMcpInProcess(envFor())
    const howTo = "none (this client sent no roots, and the server was started without --allow-dir). Start the server " +
      "with --allow-dir <directory> (or PARALLEL_LLM_ALLOW_DIRS), or use a client that sends its roots"
    try {
      provider.fake.reset()
      const secret = path.join(tmp, "outside", "secret.txt")
      const result = await ask(mcp.client, [secret])
      expect(result.isError).toBe(true)
      expect(textOf(result)).toBe(`files: ${secret} lies outside the directories this server may read: ${howTo}`)
      // The server's working directory (here the repository) is not granted implicitly.
      expect(textOf(await ask(mcp.client, ["package.json"]))).toBe(
        `files: package.json lies outside the directories this server may read: ${howTo}`
      )
      // A glob is refused where it starts, before it crawls anything.
      const glob = path.join(tmp, "outside", "*.txt")
      expect(textOf(await ask(mcp.client, [glob]))).toBe(`files: ${glob} lies outside the directories this server may read: ${howTo}`)
      expect(provider.fake.requests).toHaveLength(0)
    } finally {
      await mcp.close()
    }
  })

  it("--allow-dir adds a directory; a symlink in it that points outside is refused", async () => {
    const mcp = await connectMcpInProcess(envFor({ PARALLEL_LLM_ALLOW_DIRS: path.join(tmp, "allowed") }))
    try {
      provider.fake.reset()
      const link = path.join(tmp, "allowed", "link.txt")
      const refused = await ask(mcp.client, [link])
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain(`files: ${link} (${path.join(tmp, "outside", "secret.txt")}) lies outside the directories`)
      expect(textOf(refused)).toContain(path.join(tmp, "allowed"))
      // A directory holding the link is refused as well: each file's real path is checked.
      expect((await ask(mcp.client, [path.join(tmp, "allowed")])).isError).toBe(true)
      expect(provider.fake.requests).toHaveLength(0)

      const ok = await ask(mcp.client, [path.join(tmp, "allowed", "inside.txt")])
      expect(ok.isError, textOf(ok)).toBeFalsy()
      expect(sentToAlpha()).toContain("inside text")
    } finally {
      await mcp.close()
    }
  })

  it("a directory holding a symlink to a directory outside is refused at the link, its contents never listed", async () => {
    write("walk/inside.txt", "inside\n")
    fs.symlinkSync(path.join(tmp, "outside"), path.join(tmp, "walk", "out"))
    const mcp = await connectMcpInProcess(envFor({ PARALLEL_LLM_ALLOW_DIRS: path.join(tmp, "walk") }))
    try {
      provider.fake.reset()
      const refused = await ask(mcp.client, [path.join(tmp, "walk")])
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain(`${path.join(tmp, "walk", "out")} (${path.join(tmp, "outside")}) lies outside`)
      expect(textOf(refused)).not.toContain("secret.txt")
      expect(provider.fake.requests).toHaveLength(0)
      // A glob does not follow the link: it finds only what is inside.
      const globbed = await ask(mcp.client, [path.join(tmp, "walk", "**", "*.txt")])
      expect(globbed.isError, textOf(globbed)).toBeFalsy()
      expect(sentToAlpha()).toContain("inside")
      expect(sentToAlpha()).not.toContain("the secret")
    } finally {
      await mcp.close()
    }
  })

  it("honours a client's roots (relative paths against the first), and follows roots/list_changed", async () => {
    let roots = [path.join(tmp, "rootA")]
    const mcp = await connectWithRoots(() => roots)
    const client = mcp.client
    try {
      provider.fake.reset()
      const ok = await ask(client, ["a.txt"])
      expect(ok.isError, textOf(ok)).toBeFalsy()
      expect(sentToAlpha()).toContain("text of a")
      expect(sentToAlpha()).toContain("File: a.txt")

      provider.fake.reset()
      const b = path.join(tmp, "rootB", "b.txt")
      const refused = await ask(client, [b])
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain(`lies outside the directories this server may read: ${path.join(tmp, "rootA")}.`)
      // Not the server's working directory either, once the client has roots.
      expect(textOf(await ask(client, [path.join(repoRoot, "package.json")]))).toContain("lies outside")
      expect(provider.fake.requests).toHaveLength(0)

      roots = [path.join(tmp, "rootB")]
      await client.sendRootsListChanged()
      const now = await ask(client, [b])
      expect(now.isError, textOf(now)).toBeFalsy()
      expect(sentToAlpha()).toContain("text of b")
    } finally {
      await mcp.close()
    }
  })
})
