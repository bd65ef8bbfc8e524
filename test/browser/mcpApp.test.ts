import type { CallToolResult, ClientCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, chromium, type FrameLocator, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { APP_MIME_TYPE, RUN_VIEW_URI, UI_EXTENSION } from "../../src/mcp/appView.js"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { connectMcpInProcess, type InProcessConnection } from "../support/inProcessMcp.js"
import { hostPage, type HostSetup } from "../support/mcpAppHost.js"
import { serverEnv } from "../support/mcpHarness.js"
import { repoRoot } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { FINDINGS, MERGED_ANSWER as ANSWER, synthesizerReply } from "../support/viewerRun.js"

// The run viewer as an MCP App in a real browser: Debian's chromium (playwright-core) shows a minimal MCP Apps
// host written to the spec (test/support/mcpAppHost.ts), which iframes the page the server serves at
// ui://parallel-llm/run.html and relays the page's tools/call to the real server through the SDK's client in
// this process; the server's runs go to the loopback fake provider. Screenshots go to .tmp/screenshots/.

const CHROMIUM = "/usr/bin/chromium"
const SHOTS = path.join(repoRoot, ".tmp", "screenshots")
const hasChromium = fs.existsSync(CHROMIUM)
if (!hasChromium) console.warn(`test/browser: skipped, no ${CHROMIUM} (apt-get install -y chromium)`)

const APPS: ClientCapabilities = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } }
const HOSTILE = `Try this: <script>window.__pwned = "script"</script> <img src="x" onerror="window.__pwned = 'img'"> the answer is 4`

const tempDir = makeTempDirs("pllm-mcp-app-browser-")
let fake: FakeOpenRouter
let browser: Browser
let server: InProcessConnection
let page: string
let appTools: ReadonlyArray<string>
/** Every tools/call the page made through the host, in order. */
const relayed: Array<{ readonly name: string; readonly arguments: Record<string, unknown> }> = []

beforeAll(async () => {
  if (!hasChromium) return
  if (!fs.existsSync(path.join(repoRoot, "dist", "viewer.html"))) execFileSync("npm", ["run", "build"], { cwd: repoRoot, stdio: "ignore" })
  fs.mkdirSync(SHOTS, { recursive: true })
  fake = await startFakeOpenRouter({
    script: {
      "app/hostile": { kind: "ok", content: HOSTILE },
      "app/plain": { kind: "ok", content: "The answer is 4 apples." },
      // Long enough to be seen running, under load too.
      "app/slow": { kind: "trickle", content: "Slowly: it is 4.", chunkDelayMs: 1500, chunks: 5 },
      "app/stuck": { kind: "hang" },
      "app/synth": { kind: "ok", content: synthesizerReply(ANSWER, FINDINGS) }
    }
  })
  server = await connectMcpInProcess(
    serverEnv({ baseUrl: fake.url, outputDir: tempDir(), apiKey: "sk-or-app-test", models: ["app/plain"], synthesizer: "app/synth" }),
    APPS
  )
  // What a host does first: read the tools (which show the page, which the page may call) and the page itself.
  const { tools } = await server.client.listTools()
  const meta = (tool: Tool) => tool._meta?.ui as { resourceUri?: string; visibility?: ReadonlyArray<string> } | undefined
  expect(tools.filter((tool) => meta(tool)?.resourceUri === RUN_VIEW_URI).length).toBe(5)
  appTools = tools.filter((tool) => meta(tool)?.visibility?.includes("app") ?? true).map((tool) => tool.name)
  const read = await server.client.readResource({ uri: RUN_VIEW_URI })
  const content = read.contents[0]
  expect(content?.mimeType).toBe(APP_MIME_TYPE)
  page = content !== undefined && "text" in content ? content.text : ""
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update"]
  })
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await fake?.close()
})

const ask = async (models: ReadonlyArray<string>, wait?: number): Promise<{ input: Record<string, unknown>; result: CallToolResult }> => {
  const input = { prompt: "What is 2+2?", models, synthesizer: "app/synth", ...(wait !== undefined ? { wait } : {}) }
  const result = (await server.client.callTool({ name: "process_prompt", arguments: input })) as CallToolResult
  return { input, result }
}

/** The host page in a fresh browser page, showing the app for one tool call; console errors are kept. */
const showInHost = async (
  setup: Omit<HostSetup, "html" | "appTools">,
  /** A relayed call the host answers with an error instead of passing it on (a server that fails once). */
  fails: (name: string, args: Record<string, unknown>) => boolean = () => false
): Promise<{ tab: Page; app: FrameLocator; errors: Array<string> }> => {
  const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  const errors: Array<string> = []
  tab.on("console", (message) => void (message.type() === "error" && errors.push(message.text())))
  tab.on("pageerror", (error) => void errors.push(error.message))
  await tab.exposeFunction("relayToolCall", async (name: string, args: Record<string, unknown>) => {
    relayed.push({ name, arguments: args })
    if (fails(name, args)) return { isError: true, content: [{ type: "text", text: "the server failed once" }] }
    return await server.client.callTool({ name, arguments: args })
  })
  await tab.setContent(hostPage({ ...setup, html: page, appTools }))
  return { tab, app: tab.frameLocator("iframe#app"), errors }
}

/**
 * A screenshot of the whole host page. The viewport is first made as tall as the page (chromium leaves a frame's
 * part below the viewport unpainted in a full-page shot), and the frame is given two animation frames to paint.
 */
const shot = async (tab: Page, name: string) => {
  const height = await tab.evaluate(() => document.documentElement.scrollHeight)
  await tab.setViewportSize({ width: 1100, height })
  await tab.frames()[1]?.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))
  await tab.screenshot({ path: path.join(SHOTS, `mcp-app-${name}.png`) })
}
const runIdOf = (result: CallToolResult) => (result.structuredContent as { runId: string }).runId

describe.skipIf(!hasChromium)("the run viewer in a minimal MCP Apps host", () => {
  it("renders a finished run from the tool result: the final answer, each candidate, the report; a hostile answer stays text", async () => {
    const call = await ask(["app/hostile", "app/plain"])
    expect((call.result.structuredContent as { status: string }).status).toBe("ok")
    const { app, errors, tab } = await showInHost(call)
    await app.locator("#final-answer").waitFor()
    expect(await app.locator("#final-answer").textContent()).toBe(ANSWER)
    expect(await app.locator("#status").textContent()).toBe("ok")
    const panels = app.locator(".panel")
    expect(await panels.count()).toBe(2)
    // The candidates' answers come from get_run_view, which the page calls through the host after the result.
    await panels.nth(1).locator(".answer").waitFor()
    expect(await panels.nth(1).locator(".answer").textContent()).toBe("The answer is 4 apples.")
    expect(await panels.nth(0).locator(".answer").textContent()).toBe(HOSTILE)
    expect(await panels.nth(0).locator("script, img").count()).toBe(0)
    expect(await app.locator("#report").textContent()).toContain("2 + 2 = 4")
    expect(await app.locator("#report").textContent()).toContain("apples are red")
    expect(await tab.frames()[1]?.evaluate(() => (window as { __pwned?: string }).__pwned)).toBeUndefined()
    // The host's theme (dark, in a browser whose own scheme is light) reached the page and its colours.
    expect(await tab.frames()[1]?.evaluate(() => document.documentElement.dataset.theme)).toBe("dark")
    expect(await tab.frames()[1]?.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(21, 24, 30)")
    expect(relayed.filter((c) => c.name === "get_run_view").map((c) => c.arguments.runId)).toContain(runIdOf(call.result))
    // Within the hosts' default content security policy: nothing refused, nothing thrown.
    expect(errors).toEqual([])
    await shot(tab, "finished")
    await tab.close()
  })

  it("follows a live run to its end through the server's tools", async () => {
    const call = await ask(["app/slow", "app/plain"], 0)
    expect((call.result.structuredContent as { status: string }).status).toBe("running")
    const runId = runIdOf(call.result)
    const { app, errors, tab } = await showInHost(call)
    await app.locator("#status").waitFor()
    expect(await app.locator("#status").textContent()).toBe("running")
    await shot(tab, "running")
    await app.locator("#status", { hasText: "ok" }).waitFor({ timeout: 60_000 })
    expect(await app.locator("#final-answer").textContent()).toBe(ANSWER)
    await app.locator(".panel .answer", { hasText: "Slowly: it is 4." }).waitFor()
    // The tool result first, then get_run_view until the run ended.
    expect(relayed.filter((c) => c.name === "get_run_view" && c.arguments.runId === runId).length).toBeGreaterThanOrEqual(2)
    expect(errors).toEqual([])
    await shot(tab, "followed")
    await tab.close()
  })

  it("re-synthesizes and asks a follow-up from the page, through resynthesize and continue_run, and follows each new run", async () => {
    const call = await ask(["app/plain"])
    const runId = runIdOf(call.result)
    const { app, errors, tab } = await showInHost(call)
    await app.getByLabel("Synthesizer model").fill("app/synth")
    await app.locator("#action-resynthesize").click()
    await expect.poll(() => relayed.some((c) => c.name === "resynthesize")).toBe(true)
    expect(relayed).toContainEqual({ name: "resynthesize", arguments: { runId, wait: 0, synthesizer: "app/synth" } })
    // The page goes on with the run the action started, to its end (its line is gone once that run shows).
    const frame = tab.frames()[1]!
    const shownAfter = async (...earlier: ReadonlyArray<string>) => {
      let shown = ""
      await expect.poll(async () => {
        shown = /^ok · run (\S+)$/.exec(await frame.title())?.[1] ?? ""
        return shown !== "" && !earlier.includes(shown)
      }, { timeout: 30_000 }).toBe(true)
      return shown
    }
    const resynthesized = await shownAfter(runId)
    expect(relayed.filter((c) => c.name === "get_run_view").map((c) => c.arguments)).toContainEqual({ runId: resynthesized })
    await app.getByLabel("Follow-up question").fill("And 3+3?")
    await app.locator("#action-followUp").click()
    // The follow-up asks of the run on the page, the re-synthesized one, and the page then shows the follow-up.
    await expect.poll(() => relayed.some((c) => c.name === "continue_run")).toBe(true)
    expect(relayed).toContainEqual({ name: "continue_run", arguments: { runId: resynthesized, prompt: "And 3+3?", wait: 0 } })
    await shownAfter(runId, resynthesized)
    expect(errors).toEqual([])
    await shot(tab, "actions")
    await tab.close()
  })

  it("goes on to the run an action started when its first look at that run fails", async () => {
    const call = await ask(["app/plain"])
    const runId = runIdOf(call.result)
    let failed = false
    const failsOnce = (name: string, args: Record<string, unknown>) => {
      if (failed || name !== "get_run_view" || args["runId"] === runId) return false
      failed = true
      return true
    }
    const { app, errors, tab } = await showInHost(call, failsOnce)
    await app.locator("#final-answer").waitFor()
    await app.locator("#action-resynthesize").click()
    const frame = tab.frames()[1]!
    await expect.poll(async () => /^ok · run (\S+)$/.exec(await frame.title())?.[1] ?? runId, { timeout: 30_000 }).not.toBe(runId)
    expect(failed).toBe(true)
    expect(errors).toEqual([])
    await tab.close()
  })

  it("in a host that relays no tool calls, shows the tool result alone, its actions disabled", async () => {
    const call = await ask(["app/plain"])
    const { app, errors, tab } = await showInHost({ ...call, serverTools: false })
    await app.locator("#final-answer").waitFor()
    expect(await app.locator("#final-answer").textContent()).toBe(ANSWER)
    expect(await app.locator("#status").textContent()).toBe("ok")
    for (const action of ["cancel", "resynthesize", "followUp"]) {
      expect(await app.locator(`#action-${action}`).isDisabled(), action).toBe(true)
      expect(await app.locator(`#why-${action}`).textContent(), action).toMatch(/does not pass the page's tool calls/)
    }
    expect(errors).toEqual([])
    await shot(tab, "no-relay")
    await tab.close()
  })

  it("cancels a run from the page: cancel_run through the host, the model call aborted at the provider", async () => {
    const call = await ask(["app/stuck", "app/plain"], 0)
    const runId = runIdOf(call.result)
    const { app, errors, tab } = await showInHost(call)
    const cancel = app.locator("#action-cancel")
    await cancel.waitFor()
    expect(await cancel.isEnabled()).toBe(true)
    await cancel.click()
    await app.locator("#status", { hasText: "cancelled" }).waitFor({ timeout: 30_000 })
    expect(relayed).toContainEqual({ name: "cancel_run", arguments: { runId } })
    expect(fake.abortedRequests().map((r) => r.model)).toContain("app/stuck")
    expect(errors).toEqual([])
    await shot(tab, "cancelled")
    await tab.close()
  })
})
