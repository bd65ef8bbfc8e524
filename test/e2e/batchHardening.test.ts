import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { cliEntry, runCli, startCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// Issue 13 with two real `batch` processes (item 3). The batch bullets of items 8 and 10 (--out by inode, a
// duplicate id refused at load, the exit code, a cost the provider did not report) are
// test/unit/batchHardening.test.ts's.

let fake: FakeOpenRouter
const { root: tmp, freshDir } = tempRoot("pllm-batch-hard-")

beforeAll(async () => {
  if (!fs.existsSync(cliEntry)) throw new Error("run npm run build first")
  fake = await startFakeOpenRouter({
    script: {
      "lock/hang": { kind: "hang" },
      // Hangs for the first batch (killed), answers the second.
      "lock/once": [{ kind: "hang" }, { kind: "ok", content: "answered at last" }],
      "ok/synth": { kind: "ok", content: "synthesized" }
    }
  })
})
afterAll(async () => {
  await fake?.close()
})

const envFor = (dir: string) => fakeCliEnv(fake.url, { home: tmp, outputDir: path.join(dir, "runs") }, { PARALLEL_LLM_RETRIES: "0" })
/** The fields of a results line (src/programs/batchResults.ts) read here. */
interface ResultLine {
  readonly id: string
  readonly status: string
}
const readResults = (file: string): Array<ResultLine> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as ResultLine)
const requestsFor = (model: string) => fake.chatRequests().filter((r) => r.model === model).length

describe("two batch processes on one results file", () => {
  it("the second refuses with exit 2, naming the holder, and pays for nothing", async () => {
    const dir = freshDir("refuse")
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "a", prompt: "hang" })}\n`)
    const args = ["batch", input, "-m", "lock/hang", "-s", "ok/synth"]
    const before = requestsFor("lock/hang")
    const first = startCli(args, { env: envFor(dir) })
    await waitFor("the first batch asking", () => requestsFor("lock/hang") > before, 30_000)

    const second = await runCli(args, { env: envFor(dir) })
    expect(second.code).toBe(2)
    expect(second.stderr).toContain(`in use by batch process ${first.child.pid}`)
    expect(second.stderr).toContain("--wait-lock")
    expect(requestsFor("lock/hang")).toBe(before + 1)

    first.child.kill("SIGINT")
    expect((await first.done).code).toBe(130)
    expect(fs.existsSync(`${path.join(dir, "in.results.jsonl")}.lock`)).toBe(false)
  })

  it("with --wait-lock the second waits; a holder killed with -9 leaves a lock that is taken over", async () => {
    const dir = freshDir("wait")
    const input = path.join(dir, "in.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "a", prompt: "once" })}\n`)
    const args = ["batch", input, "-m", "lock/once", "-s", "ok/synth"]
    const first = startCli(args, { env: envFor(dir) })
    await waitFor("the first batch asking", () => requestsFor("lock/once") >= 1, 30_000)

    const second = startCli([...args, "--wait-lock"], { env: envFor(dir) })
    await waitFor("the second batch waiting", () => second.stderr().includes("waiting for it"), 30_000)
    expect(requestsFor("lock/once")).toBe(1)
    first.child.kill("SIGKILL")
    await first.done

    const done = await second.done
    expect(done.code, done.stderr).toBe(0)
    expect(done.stderr).toContain("taking it over")
    expect(readResults(path.join(dir, "in.results.jsonl")).at(-1)).toMatchObject({ id: "a", status: "ok" })
  })
})
