import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Manifest } from "../../src/domain/manifest.js"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { ensureBuilt, repoRoot, runCli, type RunningCli, startCli } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { FINDINGS, MERGED_ANSWER as ANSWER, synthesizerReply } from "../support/viewerRun.js"

// `parallel-llm runs open` in a real browser: Debian's chromium, driven by playwright-core (no browser
// download), against runs made by the built CLI over the loopback fake provider. Screenshots of each state
// go to .tmp/screenshots/ (git-ignored) for a person to look at.

const CHROMIUM = "/usr/bin/chromium"
const SHOTS = path.join(repoRoot, ".tmp", "screenshots")
const hasChromium = fs.existsSync(CHROMIUM)
if (!hasChromium) console.warn(`test/browser: skipped, no ${CHROMIUM} (apt-get install -y chromium)`)

const HOSTILE = `Try this: <script>window.__pwned = "script"</script> <img src="x" onerror="window.__pwned = 'img'"> ` +
  `<b>bold?</b> [link](javascript:alert(1)) the answer is 4`

const tempDir = makeTempDirs("pllm-viewer-")
let fake: FakeOpenRouter
let browser: Browser
const servers: Array<RunningCli> = []

const env = (out: string) => ({
  PATH: process.env.PATH,
  HOME: path.dirname(out),
  OPENROUTER_BASE_URL: fake.url,
  OPENROUTER_API_KEY: "sk-or-viewer-test",
  PARALLEL_LLM_OUTPUT_DIR: out,
  PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
})
const runIdIn = (out: string): string | undefined => fs.existsSync(out) ? fs.readdirSync(out)[0] : undefined

/** `runs open ID` started; resolves with the printed URL. */
const openRun = async (out: string, runId: string): Promise<string> => {
  const cli = startCli(["runs", "open", runId], { env: env(out) })
  servers.push(cli)
  for (;;) {
    const url = /^http:\/\/127\.0\.0\.1:\d+\/runs\/[\w-]+\?token=\S+$/m.exec(cli.stdout())?.[0]
    if (url !== undefined) return url
    const exited = await Promise.race([cli.done.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))])
    if (exited) throw new Error(`runs open ended: ${cli.stderr()}`)
  }
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true })

const askedRun = async (models: ReadonlyArray<string>): Promise<{ out: string; runId: string }> => {
  const out = path.join(tempDir(), "runs")
  const result = await runCli(["ask", "What is 2+2?", ...models.flatMap((m) => ["-m", m]), "-s", "view/synth"], { env: env(out) })
  expect(result.code, result.stderr).toBe(0)
  return { out, runId: runIdIn(out) ?? "" }
}

beforeAll(async () => {
  if (!hasChromium) return
  ensureBuilt()
  fs.mkdirSync(SHOTS, { recursive: true })
  fake = await startFakeOpenRouter({
    script: {
      "view/hostile": { kind: "ok", content: HOSTILE },
      "view/plain": { kind: "ok", content: "The answer is 4 apples." },
      "view/slow": { kind: "trickle", content: "Slowly: it is 4.", chunkDelayMs: 1000, chunks: 20 },
      "view/synth": { kind: "ok", content: synthesizerReply(ANSWER, FINDINGS) }
    }
  })
  // Each launch gets a fresh, temporary --user-data-dir from playwright itself (it refuses one passed in args).
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
})

afterAll(async () => {
  for (const cli of servers) cli.child.kill("SIGINT")
  await Promise.all(servers.map((cli) => cli.done))
  await browser?.close()
  await fake?.close()
})

describe.skipIf(!hasChromium)("runs open", () => {
  it("shows a finished run: the final answer, each candidate, the report; a hostile answer stays text", async () => {
    const { out, runId } = await askedRun(["view/hostile", "view/plain"])
    const url = await openRun(out, runId)
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(url)
    // The token was traded for the cookie, and left the address bar.
    expect(new URL(page.url()).search).toBe("")
    await page.locator("#final-answer").waitFor()
    expect(await page.locator("#final-answer").textContent()).toBe(ANSWER)
    expect(await page.locator("#status").textContent()).toBe("ok")
    const panels = page.locator(".panel")
    expect(await panels.count()).toBe(2)
    expect(await panels.nth(0).locator("h3").textContent()).toBe("view/hostile")
    expect(await panels.nth(1).locator(".answer").textContent()).toBe("The answer is 4 apples.")
    // The word the final answer lacks is marked.
    expect(await panels.nth(1).locator("mark").allTextContents()).toEqual(["apples"])
    const report = page.locator("#report")
    expect(await report.textContent()).toContain("2 + 2 = 4")
    // Labels are dealt at random: who B is, run.json says.
    const manifest = JSON.parse(fs.readFileSync(path.join(out, runId, "run.json"), "utf8")) as Manifest
    const b = manifest.synthesis?.labels?.find((l) => l.label === "B")?.model
    expect(await report.textContent()).toContain(`B (${b}): apples are red`)
    expect(await report.textContent()).toContain("Confidence: medium")
    // The hostile answer is shown as the text it is: no element made from it, no script run.
    const hostile = panels.nth(0).locator(".answer")
    expect(await hostile.textContent()).toBe(HOSTILE)
    expect(await hostile.locator("script, img, b").count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined()
    // Actions are offered read-only here, each saying why.
    expect(await page.locator("#action-cancel").isDisabled()).toBe(true)
    expect(await page.locator("#why-cancel").textContent()).toContain("Only the process running a run can cancel it")
    await shot(page, "finished")
    // The top of the page at a documentation size (docs/viewer.png is a copy of it).
    await page.setViewportSize({ width: 960, height: 760 })
    await page.screenshot({ path: path.join(SHOTS, "finished-top.png") })

    // A narrow frame: tabs, moved with the arrow keys; and the dark scheme.
    await page.setViewportSize({ width: 520, height: 900 })
    await page.emulateMedia({ colorScheme: "dark" })
    await page.locator("#tab-0").focus()
    await page.keyboard.press("ArrowRight")
    expect(await page.locator("#tab-1").getAttribute("aria-selected")).toBe("true")
    expect(await page.locator("#cand-0").isVisible()).toBe(false)
    expect(await page.locator("#cand-1").isVisible()).toBe(true)
    await shot(page, "narrow-dark")
    await page.close()
  })

  it("refuses a request without the cookie, with a wrong or spent token, or from a foreign origin", async () => {
    const { out, runId } = await askedRun(["view/plain"])
    const url = await openRun(out, runId)
    const origin = new URL(url).origin
    const home = `${origin}/runs/${runId}`
    expect((await fetch(`${home}/view.json`)).status).toBe(401)
    expect((await fetch(home)).status).toBe(401)
    expect((await fetch(`${home}?token=not-the-token`, { redirect: "manual" })).status).toBe(401)
    const page = await browser.newPage()
    const first = await page.goto(url)
    expect(first?.status()).toBe(200)
    const cookies = await page.context().cookies()
    expect(cookies).toHaveLength(1)
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: "Strict" })
    const cookie = `${cookies[0]!.name}=${cookies[0]!.value}`
    expect((await fetch(`${home}/view.json`, { headers: { cookie } })).status).toBe(200)
    expect((await fetch(`${home}/view.json`, { headers: { cookie, origin: "http://evil.example" } })).status).toBe(403)
    // runs open shows its one run: another id is not found, the list leads to it.
    expect((await fetch(`${origin}/runs/20000101-000000-000-00000000/view.json`, { headers: { cookie } })).status).toBe(404)
    expect((await fetch(`${origin}/runs`, { headers: { cookie }, redirect: "manual" })).headers.get("location")).toBe(`/runs/${runId}`)
    // The printed URL works once: a second browser cannot use it.
    const other = await browser.newContext()
    const again = await (await other.newPage()).goto(url)
    expect(again?.status()).toBe(401)
    await shot(await other.newPage().then(async (p) => (await p.goto(url), p)), "unauthorized")
    await other.close()
    await page.close()
    // Ctrl-C stops it: the process ends as interrupted, and nothing listens any more.
    const cli = servers[servers.length - 1]!
    cli.child.kill("SIGINT")
    expect((await cli.done).code).toBe(130)
    await expect(fetch(home)).rejects.toThrow()
  })

  it("shows a follow-up's thread: the earlier turn's prompt and answer", async () => {
    const { out, runId } = await askedRun(["view/plain"])
    const next = await runCli(["ask", "--continue", runId, "And in pears?", "-m", "view/plain", "-s", "view/synth"], { env: env(out) })
    expect(next.code, next.stderr).toBe(0)
    const followUp = fs.readdirSync(out).find((id) => id !== runId) ?? ""
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(await openRun(out, followUp))
    const thread = page.locator("#thread")
    await thread.waitFor()
    expect(await thread.locator("h3").allTextContents()).toEqual([`Turn 1 · run ${runId}`])
    expect(await thread.locator("pre").allTextContents()).toEqual(["What is 2+2?", ANSWER])
    expect(await page.locator("#prompt pre").textContent()).toBe("And in pears?")
    await shot(page, "follow-up")
    await page.close()
  })

  it("follows a live run of another process to its end", async () => {
    const out = path.join(tempDir(), "runs")
    const asking = startCli(["ask", "What is 2+2?", "-m", "view/slow", "-m", "view/plain", "-s", "view/synth"], { env: env(out) })
    servers.push(asking)
    await fake.waitForRequests(1, 60_000)
    while (runIdIn(out) === undefined) await new Promise((r) => setTimeout(r, 50))
    const url = await openRun(out, runIdIn(out) ?? "")
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(url)
    await page.locator("#status", { hasText: "running" }).waitFor()
    await shot(page, "running")
    expect((await asking.done).code).toBe(0)
    await page.locator("#status", { hasText: "ok" }).waitFor({ timeout: 30_000 })
    expect(await page.locator("#final-answer").textContent()).toBe(ANSWER)
    expect(await page.locator("#cand-0 .answer").textContent()).toBe("Slowly: it is 4.")
    await shot(page, "followed")
    await page.close()
  })
})
