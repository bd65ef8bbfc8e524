import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { cleartextKeyWarning, stripControl } from "../../src/domain/text.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { listTree } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// Issue 13, items 2, 8 and 10, in-process: a log file that cannot be written, a gateway that answers with escape
// codes, and what the run directory lets others read. A server's log file and a reader that closes the pipe early
// (processes) are test/e2e/hostile.test.ts's.

const ESC = "\u001b"
// Bidi overrides and isolates (U+202E, U+2066) too: they make text read other than it is.
const hostile = `${ESC}]0;owned${String.fromCharCode(7)}${ESC}[2J\u009b31mforged\u202E\u2066\r`
const { root: tmp, freshDir } = tempRoot("pllm-hostile-")
const provider = withFakeProvider({
  script: {
    "h/good": { kind: "ok", content: `fine ${hostile} answer`, servedBy: `h/good${hostile}` },
    "h/bad": { kind: "status", status: 400, body: { error: { code: 400, message: `bad ${hostile} request` } } },
    "h/synth": { kind: "ok", content: `the ${hostile} synthesis` }
  }
})
const envFor = (outputDir: string, extra: Record<string, string> = {}) =>
  fakeCliEnv(provider.fake.url, { home: tmp, outputDir }, { PARALLEL_LLM_RETRIES: "0", ...extra })

/** Any C0 control but tab and newline, DEL, C1 control, or bidi embedding, override or isolate. */
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/

describe("stripControl", () => {
  it("removes C0 and C1 controls and bidi controls, keeps tabs, newlines and other text", () => {
    expect(stripControl(`a\tb\r\nc${hostile}d`)).toBe("a\tb\nc]0;owned[2J31mforgedd")
    expect(stripControl("\u202Aa\u202Bb\u202Cc\u202Dd\u202Ee\u2066f\u2067g\u2068h\u2069 שלום é")).toBe("abcdefgh שלום é")
  })
})

describe("cleartextKeyWarning", () => {
  it("warns for plain http off this machine with a key, and only then", () => {
    expect(cleartextKeyWarning("http://gateway.example:8080/v1", true)).toContain("http://gateway.example:8080")
    for (
      const url of ["https://openrouter.ai/api/v1", "http://localhost:11434/v1", "http://127.0.0.1:9/v1", "http://[::1]:9/v1", "not a url"]
    ) {
      expect(cleartextKeyWarning(url, true), url).toBeUndefined()
    }
    expect(cleartextKeyWarning("http://gateway.example/v1", false)).toBeUndefined()
  })
})

describe("a gateway that answers with escape codes", () => {
  it("reaches neither the terminal, nor the log, nor the manifest", async () => {
    const outputDir = freshDir("escapes")
    const logFile = path.join(tmp, "escapes.log")
    const result = await runCliInProcess([
      "ask",
      `my ${ESC}[2J prompt`,
      "-m",
      "h/good",
      "-m",
      "h/bad",
      "-s",
      "h/synth",
      "--log-file",
      logFile
    ], {
      env: envFor(outputDir)
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("the ]0;owned[2J31mforged synthesis")
    expect(result.stdout).not.toMatch(CONTROL)
    expect(result.stderr).toContain("bad ]0;owned")
    expect(result.stderr).not.toMatch(CONTROL)
    expect(fs.readFileSync(logFile, "utf8")).not.toMatch(CONTROL)
    const [runId] = fs.readdirSync(outputDir)
    const manifest = JSON.parse(fs.readFileSync(path.join(outputDir, runId!, "run.json"), "utf8"))
    expect(JSON.stringify(manifest)).toContain("bad ]0;owned")
    const strings = JSON.stringify(manifest, (_key, value: unknown) => value)
    expect(JSON.parse(strings).candidates[1].error.message).not.toMatch(CONTROL)
    expect(manifest.candidates[0].servedBy).not.toMatch(CONTROL)

    const shown = await runCliInProcess(["runs", "show", runId!], { env: envFor(outputDir) })
    expect(shown.stdout).toContain("bad ]0;owned")
    expect(shown.stdout).not.toMatch(CONTROL)
    const listed = await runCliInProcess(["runs"], { env: envFor(outputDir) })
    expect(listed.stdout).toContain("my [2J prompt")
    expect(listed.stdout).not.toMatch(CONTROL)
  })
})

describe("a log file that cannot be written", () => {
  it("ask warns once on stderr and answers", async () => {
    const result = await runCliInProcess(["ask", "hello", "-m", "h/good", "-s", "h/synth", "--log-file", "/dev/full"], {
      env: envFor(freshDir("devfull"))
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("synthesis")
    expect(result.stderr.match(/cannot write the log file \/dev\/full/g)).toHaveLength(1)
    expect(result.stderr).not.toContain("internal error")
  })
})

describe("the run directory", () => {
  it("is readable by its owner only (directories 0700, files 0600)", async () => {
    const outputDir = path.join(freshDir("modes"), "runs")
    const result = await runCliInProcess(["ask", "private code", "-m", "h/good", "-s", "h/synth"], { env: envFor(outputDir) })
    expect(result.code).toBe(0)
    const [runId] = fs.readdirSync(outputDir)
    const runDir = path.join(outputDir, runId!)
    expect(fs.statSync(outputDir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(runDir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(runDir, "responses")).mode & 0o777).toBe(0o700)
    for (const file of listTree(runDir)) expect(fs.statSync(path.join(runDir, file)).mode & 0o777, file).toBe(0o600)
  })
})

describe("warnings before money is spent", () => {
  it("a plain http base URL off this machine with a key: warned once", async () => {
    const env = { ...envFor(freshDir("cleartext")), OPENROUTER_API_KEY: "sk-or-test", OPENROUTER_BASE_URL: "http://10.1.2.3/api/v1" }
    const remote = await runCliInProcess(["runs"], { env })
    expect(remote.code).toBe(0)
    expect(remote.stderr.match(/sent in clear/g)).toHaveLength(1)
    const loopback = await runCliInProcess(["runs"], { env: { ...env, OPENROUTER_BASE_URL: provider.fake.url } })
    expect(loopback.stderr).not.toContain("sent in clear")
  })

  it("a model named twice in one run: refused before any call (each mention would be paid)", async () => {
    const before = provider.fake.chatRequests().length
    const result = await runCliInProcess(["ask", "hello", "-m", "h/good", "-m", "h/good", "-s", "h/synth"], {
      env: envFor(freshDir("twice"))
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--model: h/good is named twice; name each model once")
    expect(provider.fake.chatRequests().length).toBe(before)
  })
})
