// Where a prompt's CPU goes, in-process, measured by subtraction: the same prompts run (1) through the whole
// pipeline with its run directory on disk, (2) through the pipeline with a run store that writes nothing,
// (3) as six bare `callModel`s (5 candidates + the synthesis: call gate, time budget, retries), and (4) as six
// folds of the client's stream alone. (1) − (2) is the run's files, (2) − (3) the run's own logic, (3) − (4) the
// per-call policy. Each round runs every variant once, alternately, so the machine's load falls on all alike;
// medians of CPU µs per prompt.  npm run build && node bench/perPrompt.mjs   (BENCH_ROUNDS, BENCH_PROMPTS)
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const dist = (file) => import(pathToFileURL(path.join(root, "dist", file)).href)
const { loadSettings } = await dist("settings/load.js")
const { Settings } = await dist("services/settings.js")
const { ModelClient } = await dist("services/modelClient.js")
const { RunStore } = await dist("services/runStore.js")
const { Logging } = await dist("services/logging.js")
const { layerPooledHttpClient } = await dist("services/httpClientPool.js")
const { callModel } = await dist("programs/callModel.js")
const { foldAnswer } = await dist("programs/answerFold.js")
const { runPipeline } = await dist("programs/runPipeline.js")

const server = spawn(process.execPath, [path.join(root, "bench", "tokenServer.mjs"), "--events=20", "--delay=0"], {
  stdio: ["ignore", "pipe", "ignore"]
})
const url = await new Promise((resolve) => server.stdout.setEncoding("utf8").once("data", (line) => resolve(line.trim())))
fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
const out = fs.mkdtempSync(path.join(root, "bench", "results", ".perPrompt-"))
const candidates = ["t/c1", "t/c2", "t/c3", "t/c4", "t/c5"]
const six = [...candidates, "t/synth"]
const flags = { baseUrl: url, models: candidates.join(","), synthesizer: "t/synth", fallbackSynthesizers: "none", outputDir: out }
const settings = await Effect.runPromise(
  loadSettings({ flags: { ...flags, logLevel: "warning" }, env: {} }).pipe(
    Effect.map((l) => l.settings),
    Effect.provide(NodeFileSystem.layer)
  )
)
const runtime = ManagedRuntime.make(
  Layer.mergeAll(ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
    Layer.provideMerge(Settings.Test(settings)),
    Layer.provide(Layer.mergeAll(layerPooledHttpClient, NodeFileSystem.layer, NodePath.layer)),
    Layer.merge(Logging.Test(settings, [], () => undefined))
  )
)
let runs = 0
/** A run store that keeps nothing: what the pipeline costs without its files. */
const nowhere = RunStore.make({
  root: out,
  makeRunDir: () => Effect.sync(() => ({ id: `run-${++runs}`, dir: path.join(out, `run-${runs}`), createdAt: new Date() })),
  writeOwner: () => Effect.succeed(".owner.json"),
  writePrompt: () => Effect.succeed("prompt.md"),
  writeResponse: () => Effect.succeed("responses/01.md"),
  writeStepFile: (_run, relative) => Effect.succeed(relative),
  writeFinal: () => Effect.succeed("final.md"),
  writeManifest: () => Effect.succeed("run.json")
})
const request = (model, i) => ({ model, messages: [{ role: "user", content: `Question ${i}?` }] })
const policy = { retries: settings.retries, retryBaseDelayMs: settings.retryBaseDelayMs, timeoutMs: settings.timeoutMs }
const each = (f) => Effect.forEach(six, f, { concurrency: six.length, discard: true })
const variants = {
  "whole run, files on disk": (i) => runPipeline({ prompt: `Question ${i}?` }),
  "whole run, no files": (i) => Effect.provideService(runPipeline({ prompt: `Question ${i}?` }), RunStore, nowhere),
  "six callModel": (i) => each((m) => callModel(request(m, i), policy)),
  "six folds of the client's stream": (i) => Effect.flatMap(ModelClient, (c) => each((m) => foldAnswer(m, c.stream(request(m, i)))))
}
const prompts = Number(process.env.BENCH_PROMPTS ?? 100)
const cpuPerPrompt = async (variant) => {
  const before = process.cpuUsage()
  await runtime.runPromise(Effect.forEach(Array.from({ length: prompts }, (_, i) => i), variant, { concurrency: 10, discard: true }))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / prompts
}
try {
  for (const variant of Object.values(variants)) await cpuPerPrompt(variant) // warm-up
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]))
  for (let round = 0; round < Number(process.env.BENCH_ROUNDS ?? 7); round++) {
    for (const [name, variant] of Object.entries(variants)) samples[name].push(await cpuPerPrompt(variant))
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  for (const [name, xs] of Object.entries(samples)) {
    process.stdout.write(`${name.padEnd(34)} ${Math.round(median(xs))} µs/prompt  (${xs.map(Math.round).join(", ")})\n`)
  }
} finally {
  await runtime.dispose()
  server.kill("SIGTERM")
  fs.rmSync(out, { recursive: true, force: true })
}
