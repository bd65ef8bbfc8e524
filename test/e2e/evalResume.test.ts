import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { ensureBuilt, runCli, startCli } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"

// What an eval resume pays for (issue 23, finding 15) where a process is the point: an eval killed during a
// synthesis, resumed by a second process. The rest (runEval in-process) is test/unit/evalResume.test.ts's.

let fake: FakeOpenRouter
const tempDir = makeTempDirs("pllm-eval-resume-")

beforeAll(async () => {
  ensureBuilt()
  fake = await startFakeOpenRouter({
    script: {
      // Hangs the first time (the process is killed then), answers the second.
      "er/slow": [{ kind: "hang" }, { kind: "ok", content: "#### 4" }],
      "er/one": { kind: "ok", content: "one says 4" },
      "er/two": { kind: "ok", content: "two says four" }
    }
  })
})
afterAll(async () => {
  await fake?.close()
})

const callsTo = (prefix: string) => fake.chatRequests().filter((r) => r.model?.startsWith(prefix)).length

const readResults = (file: string) =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Record<string, unknown>)

/** The candidates' answers written whole under `runs` (not their `.partial.md` nor a temporary file). */
const answersOnDisk = (runs: string): number =>
  (fs.existsSync(runs) ? fs.readdirSync(runs) : []).flatMap((run) => {
    const responses = path.join(runs, run, "responses")
    return fs.existsSync(responses) ? fs.readdirSync(responses).filter((f) => /^\d+-.*(?<!\.partial)\.md$/.test(f)) : []
  }).length

describe("an eval killed during a synthesis (the built CLI)", () => {
  it("is resumed by synthesizing the answers its run left on disk: the candidates are not asked again", async () => {
    const dir = tempDir()
    const file = path.join(dir, "q.jsonl")
    fs.writeFileSync(file, `${JSON.stringify({ id: "a", question: "2+2?", answer: "4" })}\n`)
    const args = ["eval", file, "-m", "er/one", "-m", "er/two", "-s", "er/slow", "--json"]
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      OPENROUTER_BASE_URL: fake.url,
      PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs"),
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
    }
    fake.reset()
    const first = startCli(args, { env })
    await vi.waitFor(() => expect(callsTo("er/slow")).toBe(1), { timeout: 30_000, interval: 50 })
    // The answers reach the synthesizer before their files are on disk: kill once both are there, as a crash
    // during a long synthesis finds them (a kill before that rightly asks the candidates again).
    await vi.waitFor(() => expect(answersOnDisk(path.join(dir, "runs"))).toBe(2), { timeout: 30_000, interval: 50 })
    first.child.kill("SIGKILL")
    await first.done
    expect(callsTo("er/one") + callsTo("er/two")).toBe(2)

    const second = await runCli(args, { env })
    expect(second.code, second.stderr).toBe(0)
    expect(callsTo("er/one") + callsTo("er/two")).toBe(2)
    expect(callsTo("er/slow")).toBe(2)
    const [result] = readResults(path.join(dir, "q.eval.jsonl"))
    expect(result).toMatchObject({ id: "a", status: "ok", correct: true })
    expect(JSON.parse(fs.readFileSync(path.join(String(result?.runDir), "run.json"), "utf8"))).toHaveProperty("source")
  })
})
