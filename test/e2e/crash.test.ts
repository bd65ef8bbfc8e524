import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { listTree, type RunningCli, startCli } from "../support/spawnCli.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { useFakeOpenRouter } from "../support/useFakeOpenRouter.js"

const tempDir = makeTempDirs("parallel-llm-crash-")

// kill -9 in the middle of a run: every file of the run layout that exists is whole (temporary
// siblings may remain, named `.<file>.<random>.tmp`, but never a half-written layout file).

const models = ["big/one", "big/two", "big/three", "big/four"]
const contentFor = (model: string) => `# ${model}\n\n${`${model} says something long. `.repeat(40_000)}`

const provider = useFakeOpenRouter({
  script: Object.fromEntries([
    ...models.map((m, i) => [m, { kind: "ok" as const, content: contentFor(m), delayMs: 30 * i }]),
    ["big/synth", { kind: "ok" as const, content: contentFor("big/synth"), delayMs: 20 }]
  ])
})

const expectedFiles: Record<string, string> = {
  "prompt.md": "crash test",
  "final.md": contentFor("big/synth"),
  ...Object.fromEntries(models.map((m, i) => [`responses/0${i + 1}-${m.replace("/", "-")}.md`, contentFor(m)]))
}

/** Every file under the one run directory of `outputDir` (none before the run starts). */
const filesOfRun = (outputDir: string): ReadonlyArray<string> => {
  const [runId] = fs.readdirSync(outputDir)
  return runId === undefined ? [] : listTree(path.join(outputDir, runId))
}

/**
 * Resolves once `ready` holds, checked every millisecond (a write of one of these answers takes a few), or once the
 * CLI has ended: a kill then lands as close to that moment as the test can place it.
 */
const when = async (cli: RunningCli, ready: () => boolean): Promise<void> => {
  let ended = false
  void cli.done.then(() => (ended = true))
  while (!ended && !ready()) await new Promise((resolve) => setTimeout(resolve, 1))
}

describe("kill -9 during a run", () => {
  it("never leaves a half-written file", async () => {
    const seen = new Set<string>()
    const env = {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      OPENROUTER_BASE_URL: provider.fake.url,
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
      // Whole bodies: big answers arrive in one piece, so the kills land in the writes more often.
      PARALLEL_LLM_STREAM: "false"
    }
    const args = ["ask", "crash test", ...models.flatMap((m) => ["-m", m]), "-s", "big/synth"]
    const inResponses = (files: ReadonlyArray<string>) => files.filter((file) => file.startsWith("responses/")).length
    // Kill at moments of the run, each an event it reaches rather than a time: the calls sent, the first answer's
    // file appearing (its write under way), the second's, the synthesis asked, the final answer's file appearing.
    const moments: ReadonlyArray<(outputDir: string) => boolean> = [
      () => provider.fake.chatRequests().length >= models.length,
      (outputDir) => inResponses(filesOfRun(outputDir)) >= 1,
      (outputDir) => inResponses(filesOfRun(outputDir)) >= 2,
      () => provider.fake.chatRequests().length > models.length,
      (outputDir) => filesOfRun(outputDir).some((file) => /(^|\/)\.?final\.md/.test(file))
    ]
    const outputDirs: Array<string> = []
    for (const moment of moments) {
      const outputDir = tempDir()
      outputDirs.push(outputDir)
      provider.fake.reset()
      const cli = startCli(args, { env: { ...env, PARALLEL_LLM_OUTPUT_DIR: outputDir } })
      await when(cli, () => moment(outputDir))
      cli.child.kill("SIGKILL")
      await cli.done
    }
    for (const outputDir of outputDirs) {
      for (const runId of fs.readdirSync(outputDir)) {
        for (const file of listTree(path.join(outputDir, runId))) {
          const name = path.basename(file)
          if (name.startsWith(".") && name.endsWith(".tmp")) continue
          // The owner record of a run whose process was killed: it says who owned the run.
          if (file === "owner.json") continue
          seen.add(file)
          const text = fs.readFileSync(path.join(outputDir, runId, file), "utf8")
          if (file === "run.json") {
            expect(() => JSON.parse(text), `${runId}/run.json parses`).not.toThrow()
          } else {
            expect(file in expectedFiles, `${file} is a layout file`).toBe(true)
            expect(text.length, `${runId}/${file} is whole`).toBe(expectedFiles[file]!.length)
            expect(text === expectedFiles[file], `${runId}/${file} is whole`).toBe(true)
          }
        }
      }
    }
    // The kills landed at different stages: at least prompts and some answers were on disk.
    expect(seen.has("prompt.md")).toBe(true)
    expect([...seen].some((f) => f.startsWith("responses/"))).toBe(true)
  })
})
