import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { jsonl } from "../support/jsonl.js"
import { ensureBuilt, runCli, startCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// `batch` where a process is the point: Ctrl-C on the built CLI against the loopback fake, then the next pass (a
// process too: this file loads nothing of the app). The rest of `batch` runs in-process in test/unit/batchCli.test.ts.
// No timing assertions.

let fake: FakeOpenRouter
const { root: tmp, freshDir } = tempRoot("pllm-batch-")

beforeAll(async () => {
  ensureBuilt()
  fake = await startFakeOpenRouter({
    script: {
      "res/synth": { kind: "ok", content: "The answer is 4.", usage: { prompt_tokens: 9, completion_tokens: 5, cost: 0.003 } },
      "int/hang": { kind: "hang" },
      "int/fast": { kind: "ok", content: "fast answer" }
    }
  })
})

afterAll(async () => {
  await fake?.close()
})

const envFor = (outputDir: string) => fakeCliEnv(fake.url, { home: tmp, outputDir }, { PARALLEL_LLM_RETRY_BASE_DELAY: "0.01" })

/** The fields of a results line (src/programs/batchResults.ts) read here. */
interface ResultLine {
  readonly id: string
  readonly status: string
  readonly runDir: string | null
}

const readResults = (file: string): Array<ResultLine> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as ResultLine)

/** The current state of each id: the last line for it wins. */
const lastById = (results: ReadonlyArray<ResultLine>) => new Map(results.map((r) => [r.id, r]))

describe("parallel-llm batch (the built CLI)", () => {
  it("Ctrl-C: the runs in flight end cancelled, their lines are written, exit 130; the next pass finishes the job", async () => {
    const dir = freshDir("interrupt")
    const input = path.join(dir, "slow.jsonl")
    fs.writeFileSync(
      input,
      jsonl([
        { id: "a", prompt: "hangs" },
        { id: "b", prompt: "hangs too" },
        { id: "c", prompt: "never started" }
      ])
    )
    const env = envFor(path.join(dir, "runs"))
    const cli = startCli(["batch", input, "-m", "int/hang", "-m", "int/fast", "-s", "res/synth", "--runs", "2"], {
      env,
      timeoutMs: 120_000
    })
    await waitFor(
      "both runs asking",
      () => fake.chatRequests().filter((r) => r.model === "int/hang").length >= 2 || cli.child.exitCode !== null,
      60_000
    )
    // The fast candidates' answers are on disk: they must survive the interruption.
    const fastAnswers = () =>
      fs.existsSync(path.join(dir, "runs"))
        ? fs.readdirSync(path.join(dir, "runs")).filter((run) => fs.existsSync(path.join(dir, "runs", run, "responses", "02-int-fast.md")))
          .length
        : 0
    await waitFor("the fast candidates answered", () => fastAnswers() >= 2 || cli.child.exitCode !== null, 60_000)
    cli.child.kill("SIGINT")
    const result = await cli.done
    expect(result.code, result.stderr).toBe(130)
    expect(result.stderr).toContain("batch interrupted")

    const results = readResults(path.join(dir, "slow.results.jsonl"))
    expect(results.map((r) => [r.id, r.status]).sort()).toEqual([["a", "cancelled"], ["b", "cancelled"]])
    for (const r of results) {
      const manifest = JSON.parse(fs.readFileSync(path.join(r.runDir!, "run.json"), "utf8"))
      expect(manifest.status).toBe("cancelled")
      expect(manifest.candidates.find((c: { model: string }) => c.model === "int/fast")).toMatchObject({ status: "ok" })
    }

    // Resume with a model that answers: all three run now (cancelled ones are retried, c was never started).
    const resumed = await runCli(["batch", input, "-m", "int/fast", "-s", "res/synth"], { env, timeoutMs: 120_000 })
    expect(resumed.code, resumed.stderr).toBe(0)
    const last = lastById(readResults(path.join(dir, "slow.results.jsonl")))
    expect([...last.values()].map((r) => [r.id, r.status]).sort()).toEqual([["a", "ok"], ["b", "ok"], ["c", "ok"]])
  })
})
