import * as fs from "node:fs"
import * as path from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { bearer, connectHttp, type HttpServer, startHttpServer } from "../support/httpHarness.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { serverEnv } from "../support/mcpHarness.js"
import { repoRoot } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { synthesizerReply } from "../support/viewerRun.js"

// The run viewer over `serve --http` in a real browser (Debian's chromium, playwright-core): the built
// server, its runs made over the loopback fake provider. A browser gets in by the one-time URL the server
// prints (or one from POST /runs/login with the bearer token); scripts use the bearer token. Screenshots
// of each state go to .tmp/screenshots/http-*.png (git-ignored).

const CHROMIUM = "/usr/bin/chromium"
const SHOTS = path.join(repoRoot, ".tmp", "screenshots")
const hasChromium = fs.existsSync(CHROMIUM)

const HOSTILE = `Look: <script>window.__pwned = "script"</script> <img src="x" onerror="window.__pwned = 'img'"> ` +
  `<b>bold?</b> <a href="javascript:window.__pwned='link'">click</a> the answer is 4`
const HOSTILE_PROMPT = `<img src=x onerror="window.__pwned='list'"> What is 2+2?`
const FINDINGS = { agreements: ["2 + 2 = 4"], contradictions: [], uniqueClaims: [], confidence: "high", confidenceReason: "All agree." }
const ANSWER = "The answer is 4."
// Every candidate's reply also reads as a judge's ranking, and as a refined answer.
const PLAIN = "It is 4.\nRANKING: B > A"

const tempDir = makeTempDirs("pllm-http-viewer-")
let fake: FakeOpenRouter
let browser: Browser
let server: HttpServer
let out: string
let printedUrl: string

const env = () =>
  serverEnv({
    baseUrl: fake.url,
    outputDir: out,
    apiKey: "sk-or-http-viewer-test",
    models: ["hv/plain", "hv/two"],
    synthesizer: "hv/synth"
  })

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `http-${name}.png`), fullPage: true })

/** A run made by `ask` in this process, into the server's output directory; its id. */
const ask = async (prompt: string, ...args: ReadonlyArray<string>): Promise<string> => {
  const before = new Set(fs.existsSync(out) ? fs.readdirSync(out) : [])
  const result = await runCliInProcess(["ask", prompt, ...args], { env: env() })
  expect(result.code, result.stderr).toBe(0)
  return fs.readdirSync(out).find((id) => !before.has(id)) ?? ""
}

/** A fresh one-time URL, as a script with the bearer token gets one. */
const loginUrl = async (): Promise<string> => {
  const response = await fetch(`${server.base}/runs/login`, { method: "POST", headers: bearer(server.token) })
  expect(response.status).toBe(200)
  return (await response.text()).trim()
}

/** A browser context signed in through a one-time URL (the session cookie set). */
const signedIn = async (): Promise<BrowserContext> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const page = await context.newPage()
  await page.goto(await loginUrl())
  await page.close()
  return context
}

const pwned = (page: Page) => page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)

beforeAll(async () => {
  if (!hasChromium) return
  fs.mkdirSync(SHOTS, { recursive: true })
  out = path.join(tempDir(), "runs")
  fake = await startFakeOpenRouter({
    default: { kind: "ok", content: PLAIN },
    script: {
      "hv/hostile": { kind: "ok", content: HOSTILE },
      "hv/bad": { kind: "status", status: 400, body: { error: { code: 400, message: "No such <b>model</b>" } } },
      "hv/synth": { kind: "ok", content: synthesizerReply(ANSWER, FINDINGS) },
      "hv/slow": { kind: "trickle", content: "Slowly, slowly: it is 4, as anyone can see.", chunkDelayMs: 400, chunks: 200 }
    }
  })
  server = await startHttpServer(env())
  printedUrl = /runs in a browser at (http:\/\/\S+\/runs\?token=\S+)/.exec(server.cli.stderr())?.[1] ?? ""
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"]
  })
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await fake?.close()
})

describe.skipIf(!hasChromium)("serve --http: the run viewer", () => {
  it("needs the cookie (401 without); the printed URL trades its one-time token for it; the bearer token works for scripts", async () => {
    const runId = await ask("What is 2+2?", "-m", "hv/plain")
    const home = `${server.base}/runs/${runId}`
    expect(printedUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/runs\?token=[\w-]{43}$/)
    // No cookie, no token: 401, for the list, the page and its data alike; a stranger's cookie is no better.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    expect((await page.goto(home))?.status()).toBe(401)
    await shot(page, "unauthorized")
    for (const url of [`${server.base}/runs`, `${home}/view.json`]) expect((await fetch(url)).status).toBe(401)
    const forged = { cookie: `pllm_runs_${new URL(server.base).port}=v1.99999999999999.${"A".repeat(43)}` }
    expect((await fetch(home, { headers: forged })).status).toBe(401)
    // The printed URL: the cookie set, the browser sent on to the address without the token.
    expect((await page.goto(printedUrl))?.status()).toBe(200)
    expect(page.url()).toBe(`${server.base}/runs`)
    const [cookie] = await context.cookies()
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/runs" })
    expect((await page.goto(home))?.status()).toBe(200)
    await page.locator("#final-answer").waitFor()
    // The token worked once: another browser cannot use it.
    const other = await browser.newContext()
    expect((await (await other.newPage()).goto(printedUrl))?.status()).toBe(401)
    await other.close()
    // Scripts: the bearer token, no cookie; a foreign Origin is refused whatever the credentials.
    const data = await fetch(`${home}/view.json`, { headers: bearer(server.token) })
    expect(data.status).toBe(200)
    expect(((await data.json()) as { data: { view: { final: string } } }).data.view.final).toBe(ANSWER)
    const foreign = { ...bearer(server.token), origin: "http://localhost:9" }
    expect((await fetch(`${home}/view.json`, { headers: foreign })).status).toBe(403)
    // Unknown runs and ids that are no run id are not found (nothing is read for them).
    for (const id of ["20000101-000000-000-00000000", "..%2F..%2Fetc", "x"]) {
      expect((await fetch(`${server.base}/runs/${id}/view.json`, { headers: bearer(server.token) })).status, id).toBe(404)
    }
    await context.close()
  })

  it("lists the runs at /runs, the prompt escaped, each linked to its page", async () => {
    const runId = await ask(HOSTILE_PROMPT, "-m", "hv/plain")
    const context = await signedIn()
    const page = await context.newPage()
    await page.goto(`${server.base}/runs`)
    const row = page.locator("#runs tbody tr", { hasText: runId })
    expect(await row.locator("td").allTextContents()).toEqual([
      runId,
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      HOSTILE_PROMPT,
      "ok",
      "synthesize",
      expect.stringMatching(/^\$\d+\.\d{4}$/)
    ])
    expect(await page.locator("#runs img").count()).toBe(0)
    expect(await pwned(page)).toBeUndefined()
    await shot(page, "list")
    await row.locator("a").click()
    await page.locator("#final-answer").waitFor()
    expect(page.url()).toBe(`${server.base}/runs/${runId}`)
    await context.close()
  })

  it("shows a hostile candidate answer as text: visible, no element made of it, no script run; a failed one says why", async () => {
    const runId = await ask("What is 2+2?", "-m", "hv/hostile", "-m", "hv/plain", "-m", "hv/bad")
    const context = await signedIn()
    const page = await context.newPage()
    await page.goto(`${server.base}/runs/${runId}`)
    const hostile = page.locator("#cand-0 .answer")
    await hostile.waitFor()
    expect(await hostile.textContent()).toBe(HOSTILE)
    expect(await hostile.isVisible()).toBe(true)
    expect(await hostile.locator("script, img, b, a").count()).toBe(0)
    expect(await pwned(page)).toBeUndefined()
    expect(await page.locator("#progress-2").textContent()).toMatch(/^hv\/bad failed \(.*No such <b>model<\/b>.*\)$/)
    expect(await page.locator("#progress-2 b").count()).toBe(0)
    await shot(page, "hostile")
    await context.close()
  })

  it("shows a rank run: the aggregate ranking and each judge's ranking with the models behind its labels", async () => {
    const runId = await ask("What is 2+2?", "-m", "hv/plain", "-m", "hv/two", "--strategy", "rank")
    const manifest = JSON.parse(fs.readFileSync(path.join(out, runId, "run.json"), "utf8")) as {
      strategy: { labels: ReadonlyArray<{ label: string; model: string }> }
    }
    const modelOf = (label: string) => manifest.strategy.labels.find((l) => l.label === label)?.model
    const context = await signedIn()
    const page = await context.newPage()
    await page.goto(`${server.base}/runs/${runId}`)
    await page.locator("#strategy").waitFor()
    expect(await page.locator("#strategy-title").textContent()).toBe("Strategy: rank")
    const rows = page.locator("#aggregate tr")
    expect(await rows.count()).toBe(3)
    expect(await rows.nth(1).locator("td").nth(2).textContent()).toMatch(/^hv\/(plain|two)$/)
    // Each judge ranks the other's answer alone (its own left out): "B (model)".
    const judges = page.locator("#judges > li")
    expect(await judges.count()).toBe(2)
    for (const [i, judge] of ["hv/plain", "hv/two"].entries()) {
      const text = (await judges.nth(i).textContent()) ?? ""
      const label = /: ([A-Z]) \(/.exec(text)?.[1] ?? "?"
      expect(text).toContain(`${judge}: ${label} (${modelOf(label)})`)
      expect(modelOf(label)).not.toBe(judge)
      expect(text).toContain("RANKING: B > A")
    }
    await shot(page, "rank")
    await context.close()
  })

  it("shows a refine run: each later round with every refined answer", async () => {
    const runId = await ask("What is 2+2?", "-m", "hv/plain", "-m", "hv/two", "--strategy", "refine")
    const context = await signedIn()
    const page = await context.newPage()
    await page.goto(`${server.base}/runs/${runId}`)
    const round = page.locator("#round-2")
    await round.waitFor()
    expect(await round.locator("h3").textContent()).toBe("Round 2: 2 answers")
    expect(await round.locator("summary strong").allTextContents()).toEqual(["hv/plain", "hv/two"])
    await round.locator("summary").first().click()
    expect(await round.locator("pre").first().textContent()).toBe(PLAIN)
    expect(await round.locator("pre").first().isVisible()).toBe(true)
    await shot(page, "refine")
    await context.close()
  })

  it("follows a run of this server live (tokens streamed so far), and cancels it from the page", async () => {
    const mcp = await connectHttp(server.url, bearer(server.token))
    const started = await mcp.client.callTool({
      name: "process_prompt",
      arguments: { prompt: "What is 2+2, slowly?", models: ["hv/slow", "hv/plain"], wait: 0 }
    })
    const runId = (started.structuredContent as { runId: string }).runId
    const context = await signedIn()
    const page = await context.newPage()
    await page.goto(`${server.base}/runs/${runId}`)
    await page.locator("#status", { hasText: "running" }).waitFor()
    await page.locator("#progress-0", { hasText: /hv\/slow streaming, ~\d+ tokens? so far/ }).waitFor({ timeout: 60_000 })
    expect(await page.locator("#progress-1").textContent()).toBe("hv/plain answered")
    await shot(page, "live")
    expect(await page.locator("#action-cancel").isDisabled()).toBe(false)
    await page.locator("#action-cancel").click()
    await page.locator("#status", { hasText: "cancelled" }).waitFor({ timeout: 60_000 })
    expect(await page.locator("#cand-0 .meta").textContent()).toContain("cut")
    await shot(page, "cancelled")
    await context.close()
    await mcp.close()
  })
})
