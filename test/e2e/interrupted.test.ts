import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeOpenRouter, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { spawnRawServer } from "../support/mcpHarness.js"
import { cliEntry, runCli, startCli } from "../support/spawnCli.js"
import { tempRoot } from "../support/tempDirs.js"
import { fakeCliEnv } from "../support/useFakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

// Item 5 of issue 13 with the built CLI: a run whose process is killed (-9) shows as `interrupted`
// with its answers, its stray temporary files go, and `resynth` finishes it (those three commands read what the
// killed process left, each a process of its own); SIGHUP ends `ask`, `batch` and `serve` like SIGTERM does, with the
// manifest written.

let fake: FakeOpenRouter
const { root: tmp, freshDir } = tempRoot("pllm-interrupted-")

beforeAll(async () => {
  if (!fs.existsSync(cliEntry)) throw new Error("run npm run build first")
  fake = await startFakeOpenRouter({
    script: {
      "k/fast": { kind: "ok", content: "the fast answer" },
      "k/hang": { kind: "hang" },
      "k/synth": { kind: "ok", content: "THE SYNTHESIS" }
    }
  })
})
afterAll(async () => {
  await fake?.close()
})

const envFor = (outputDir: string) => fakeCliEnv(fake.url, { home: tmp, outputDir })
const args = ["-m", "k/fast", "-m", "k/hang", "-s", "k/synth"]
const answerFile = "responses/01-k-fast.md"

/** The one run directory under `outputDir`, once its fast answer is on disk. */
const runWithAnswer = (outputDir: string) =>
  waitFor("the first answer on disk", () => {
    const id = fs.existsSync(outputDir) ? fs.readdirSync(outputDir)[0] : undefined
    return id !== undefined && fs.existsSync(path.join(outputDir, id, answerFile)) ? id : undefined
  })

describe("a run whose process is killed with -9", () => {
  it("is listed and shown as interrupted with its answers, its temporary files are swept, and resynth finishes it", async () => {
    const outputDir = freshDir("kill9")
    const env = envFor(outputDir)
    const cli = startCli(["ask", "what is 2+2?", ...args], { env })
    const id = await runWithAnswer(outputDir)
    cli.child.kill("SIGKILL")
    expect((await cli.done).signal).toBe("SIGKILL")
    const dir = path.join(outputDir, id)
    expect(fs.existsSync(path.join(dir, "run.json"))).toBe(false)
    // What a writer killed in the middle of a write leaves behind.
    const stray = path.join(dir, "responses", ".02-k-hang.md.0123abcd.tmp")
    fs.writeFileSync(stray, "x".repeat(100_000))
    // A strategy's step files are written the same way, in folders of their own.
    const strayStep = [
      path.join(dir, "rankings", ".01-k-fast.md.0123abcd.tmp"),
      path.join(dir, "rounds", "2", ".01-k-fast.md.0123abcd.tmp")
    ]
    for (const file of strayStep) {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, "x")
    }

    const listed = await runCli(["runs", "--json"], { env })
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toMatchObject([{ id, status: "interrupted", answered: "1/2" }])
    expect(fs.existsSync(stray)).toBe(false)
    for (const file of strayStep) expect(fs.existsSync(file)).toBe(false)

    const shown = await runCli(["runs", "show", id], { env })
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain("interrupted")
    expect(shown.stdout).toContain(answerFile)
    expect(shown.stdout).toContain(`parallel-llm resynth ${id}`)

    const resynth = await runCli(["resynth", id], { env })
    expect(resynth.stderr).not.toContain("internal error")
    expect(resynth.code).toBe(0)
    expect(resynth.stdout).toContain("THE SYNTHESIS")
    const again = fs.readdirSync(outputDir).find((d) => d !== id)!
    expect(JSON.parse(fs.readFileSync(path.join(outputDir, again, "run.json"), "utf8"))).toMatchObject({ source: id, status: "partial" })
  })
})

describe("SIGHUP", () => {
  it("ends ask like SIGTERM: the run's manifest is written, the answer kept", async () => {
    const outputDir = freshDir("hup-ask")
    const cli = startCli(["ask", "what is 2+2?", ...args], { env: envFor(outputDir) })
    const id = await runWithAnswer(outputDir)
    cli.child.kill("SIGHUP")
    const done = await cli.done
    expect(done.signal).toBeNull()
    expect(done.code).toBe(130)
    const manifest = JSON.parse(fs.readFileSync(path.join(outputDir, id, "run.json"), "utf8"))
    expect(manifest).toMatchObject({ status: "cancelled", candidates: [{ status: "ok", file: answerFile }, { status: "cancelled" }] })
    expect(fs.existsSync(path.join(outputDir, id, "owner.json"))).toBe(false)
  })

  it("ends batch like SIGTERM: the prompt's result line and its manifest are written", async () => {
    const outputDir = freshDir("hup-batch")
    const input = path.join(outputDir, "..", "hup-batch.jsonl")
    fs.writeFileSync(input, `${JSON.stringify({ id: "p1", prompt: "what is 2+2?" })}\n`)
    const cli = startCli(["batch", input, ...args], { env: envFor(outputDir) })
    const id = await runWithAnswer(outputDir)
    cli.child.kill("SIGHUP")
    const done = await cli.done
    expect(done.signal).toBeNull()
    expect(JSON.parse(fs.readFileSync(path.join(outputDir, id, "run.json"), "utf8")).status).toBe("cancelled")
    const results = fs.readFileSync(input.replace(/\.jsonl$/, ".results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(results).toMatchObject([{ id: "p1", status: "cancelled" }])
  })

  it("ends serve like SIGTERM: a run in flight writes its manifest", async () => {
    const outputDir = freshDir("hup-serve")
    const server = await spawnRawServer({
      ...envFor(outputDir),
      PATH: process.env.PATH ?? "",
      HOME: tmp,
      PARALLEL_LLM_MODELS: "k/fast,k/hang",
      PARALLEL_LLM_SYNTHESIZER: "k/synth"
    })
    server.send("tools/call", { name: "process_prompt", arguments: { prompt: "what is 2+2?" } })
    const id = await runWithAnswer(outputDir)
    server.child.kill("SIGHUP")
    const exited = await server.exited
    expect(exited.signal).toBeNull()
    expect(JSON.parse(fs.readFileSync(path.join(outputDir, id, "run.json"), "utf8")).status).toBe("cancelled")
  })
})
