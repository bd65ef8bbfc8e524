import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { onlyRunDir, readRunJson } from "../support/runOnDisk.js"
import { ensureBuilt, listTree, startCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// Ctrl-C, which needs the CLI in its own process (`node dist/main.js ...`), against the loopback fake. The rest of
// the CLI's command lines run in-process in test/unit/cli.test.ts.

const KEY = "sk-or-v1-CLI-SECRET-9d8c7b6a5f4e3d2c1b0a99887766554433"

let fake: FakeOpenRouter
const { root: tmp, freshDir } = tempRoot("pllm-cli-")
const home = path.join(tmp, "home")

beforeAll(async () => {
  ensureBuilt()
  fs.mkdirSync(home, { recursive: true })
  fake = await startFakeOpenRouter({ script: { "int/hang": { kind: "hang" }, "int/fast": { kind: "ok", content: "fast answer" } } })
})

afterAll(async () => {
  await fake?.close()
})

/** A clean environment (nothing inherited but PATH) pointing at the fake. `undefined` removes a variable. */
const envFor = (outputDir: string, extra: Readonly<Record<string, string | undefined>> = {}) =>
  fakeCliEnv(fake.url, { home, outputDir }, { OPENROUTER_API_KEY: KEY, PARALLEL_LLM_RETRY_BASE_DELAY: "0.01", ...extra })

const chatModels = (prefix: string): ReadonlyArray<string> =>
  fake.chatRequests().map((r) => r.model ?? "").filter((m) => m.startsWith(prefix))

const STACK_FRAME = /^\s+at\s/m

describe("parallel-llm CLI, a process", () => {
  it("Ctrl-C: exit 130, manifest cancelled, the fast answer kept, the hanging request aborted", async () => {
    const out = freshDir("interrupt")
    const running = startCli(["ask", "interrupt me", "-m", "int/hang", "-m", "int/fast", "-s", "int/synth"], {
      env: envFor(out)
    })
    const fastFile = () => {
      const runs = fs.existsSync(out) ? fs.readdirSync(out) : []
      return runs.length === 1 && fs.existsSync(path.join(out, runs[0]!, "responses", "02-int-fast.md"))
    }
    try {
      await waitFor("the fast answer on disk", fastFile, 30_000)
      await waitFor("the hanging request at the fake", () => chatModels("int/hang").length === 1, 30_000)
    } catch (error) {
      running.child.kill("SIGKILL")
      throw new Error(`${String(error)}\nstderr so far:\n${running.stderr()}`, { cause: error })
    }
    running.child.kill("SIGINT")
    const r = await running.done
    expect(r.stdout.includes(KEY) || r.stderr.includes(KEY)).toBe(false)
    expect(r.code, `signal ${r.signal}; stderr:\n${r.stderr}`).toBe(130)
    expect(r.stdout).toBe("")
    expect(r.stderr).not.toMatch(STACK_FRAME)

    const runDir = onlyRunDir(out)
    const manifest = readRunJson(runDir)
    expect(manifest.status).toBe("cancelled")
    expect(manifest.candidates[0]).toMatchObject({ model: "int/hang", status: "cancelled" })
    expect(manifest.candidates[1]).toMatchObject({ model: "int/fast", status: "ok", file: "responses/02-int-fast.md" })
    expect(fs.readFileSync(path.join(runDir, "responses", "02-int-fast.md"), "utf8")).toBe("fast answer")
    expect(listTree(runDir)).toEqual(["prompt.md", "responses/02-int-fast.md", "run.json"])
    expect(chatModels("int/synth")).toHaveLength(0)
    await waitFor("the fake to see the hanging request aborted", () => fake.abortedRequests().some((q) => q.model === "int/hang"), 10_000)
  })
})
