import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { withAskedAnswers } from "../../src/programs/eval/askedAnswers.js"
import { type EvalResult, rescore } from "../../src/programs/eval/evalResults.js"
import { scorers } from "../../src/programs/eval/scorers.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { onlyManifestIn } from "../support/mcpHarness.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// An eval reads back the runs it made (asked candidates' answers for the baselines, final.md to rescore): the
// run directory comes from its results file and the answers' names from run.json, files that may be edited. A
// name that leaves the run, or a run directory that is a link to elsewhere, gives no answer: nothing outside the
// runs directory is read.

const provider = withFakeProvider()
const tempDir = makeTempDirs("pllm-eval-run-files-")
const run = <A, E>(effect: Effect.Effect<A, E, NodeContext.NodeContext>) => Effect.runPromise(Effect.provide(effect, NodeContext.layer))

/** One run of `ask` on disk, and a file outside the runs directory that holds the right answer. */
const askedRun = async () => {
  const dir = tempDir()
  provider.fake.setScript({
    "ev/a": { kind: "ok", content: "#### 5" },
    "ev/b": { kind: "ok", content: "#### 6" },
    "ev/s": { kind: "ok", content: "#### 7" }
  })
  const r = await runCliInProcess(["ask", "What is 2+2?", "-m", "ev/a", "-m", "ev/b", "-s", "ev/s"], { env: provider.cliEnv(dir) })
  expect(r.code, r.stderr).toBe(0)
  const runsDir = path.join(dir, "runs")
  const runDir = path.join(runsDir, onlyManifestIn(runsDir).id)
  fs.writeFileSync(path.join(dir, "outside.md"), "#### 4")
  return { dir, runDir }
}

const resultOf = (runDir: string): EvalResult => ({
  strategy: "synthesize",
  id: "q1",
  line: 1,
  fingerprint: "f",
  runDir,
  status: "ok",
  scorer: "exact",
  answer: "4",
  correct: false,
  cost: null,
  promptTokens: null,
  completionTokens: null,
  durationMs: null
})

describe("an eval reading back its runs", () => {
  it("reads a candidate's answer only from its run: a run.json naming ../../outside.md gives none", async () => {
    const { runDir } = await askedRun()
    const manifestFile = path.join(runDir, "run.json")
    const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"))
    manifest.candidates[0].file = "../../outside.md"
    fs.writeFileSync(manifestFile, JSON.stringify(manifest))
    const item = { line: 1, id: "q1", question: "What is 2+2?", answer: "4", candidates: undefined }
    const [scored] = await run(withAskedAnswers([item], ["synthesize"], [resultOf(runDir)]))
    expect(scored?.candidates).toEqual([{ model: "ev/a", content: "" }, { model: "ev/b", content: "#### 6" }])
  })

  it("rescores from final.md only in the run's own directory, not through a run directory linked elsewhere", async () => {
    const { dir, runDir } = await askedRun()
    expect(await run(rescore(resultOf(runDir), "numeric", "7", scorers.numeric))).toMatchObject({ scorer: "numeric", correct: true })
    // The run directory swapped for a link to a directory whose final.md holds another answer.
    const elsewhere = path.join(dir, "elsewhere")
    fs.mkdirSync(elsewhere)
    fs.writeFileSync(path.join(elsewhere, "final.md"), "#### 4")
    fs.rmSync(runDir, { recursive: true })
    fs.symlinkSync(elsewhere, runDir)
    expect(await run(rescore(resultOf(runDir), "numeric", "4", scorers.numeric))).toBeUndefined()
  })
})
