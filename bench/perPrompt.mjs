// Where a prompt's CPU goes, in-process, measured by subtraction: the same prompts run (1) through the whole
// pipeline with its run directory on disk, (2) through the pipeline with a run store that writes nothing,
// (3) as six bare `callModel`s (5 candidates + the synthesis: call gate, time budget, retries), and (4) as six
// folds of the client's stream alone. (1) − (2) is the run's files, (2) − (3) the run's own logic, (3) − (4) the
// per-call policy. Beside them, the same work in bare Node, as the floor (bench/floor.mjs) does it: (5) the whole
// prompt, (6) its six calls by global `fetch`, (7) its files by `fs.promises`; and (8) the run store writing those
// same files. Each round runs every variant once, alternately, so the machine's load falls on all alike; medians of
// CPU µs per prompt. `BENCH_OPS=1` counts instead of timing: Effect operations and fibers per prompt of each variant
// (a counting Supervisor), which hardly move from run to run.
//   npm run build && node bench/perPrompt.mjs   (BENCH_ROUNDS, BENCH_PROMPTS, BENCH_VARIANTS=a,b by the keys below)
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, Layer, ManagedRuntime, RuntimeFlags, Supervisor } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bareComplete, writeAtomic } from "./bare.mjs"

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
/** Operations and fibers, counted when BENCH_OPS is set (OpSupervision calls the supervisor at every operation). */
const counted = { ops: 0, fibers: 0 }
class Counting extends Supervisor.AbstractSupervisor {
  get value() {
    return Effect.succeed(counted)
  }
  onStart() {
    counted.fibers++
  }
  onEffect() {
    counted.ops++
  }
}
const counting = process.env.BENCH_OPS
  ? Layer.mergeAll(Supervisor.addSupervisor(new Counting()), RuntimeFlags.enableOpSupervision)
  : Layer.empty
const runtime = ManagedRuntime.make(
  Layer.mergeAll(counting, ModelClient.Default, RunStore.DefaultWithoutDependencies).pipe(
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
/** The floor's call (bench/bare.mjs). */
const bareCall = (model, content) => bareComplete(url, model, content)
/** The floor's files of a prompt: its directory, the prompt, five answers, final.md, run.json. */
const bareFiles = async (i, answers, final) => {
  const dir = path.join(out, `bare-${i}-${++runs}`)
  await fsp.mkdir(path.join(dir, "responses"), { recursive: true, mode: 0o700 })
  await writeAtomic(path.join(dir, "prompt.md"), `Question ${i}?`)
  await Promise.all(answers.map((a, k) => writeAtomic(path.join(dir, "responses", `0${k + 1}-${a.model.replace(/\W+/g, "-")}.md`), a.text)))
  await writeAtomic(path.join(dir, "final.md"), final)
  const record = { prompt: `Question ${i}?`, candidates: answers.map((a) => ({ model: a.model, usage: a.usage })), status: "ok" }
  await writeAtomic(path.join(dir, "run.json"), JSON.stringify(record, null, 2))
}
const words = Array.from({ length: 20 }, (_, k) => `word${k}`).join(" ")
const answers = candidates.map((model) => ({ model, text: words, usage: { prompt_tokens: 10, completion_tokens: 20 } }))
// A manifest as the pipeline writes it, for the run store's variant.
const sample = await runtime.runPromise(runPipeline({ prompt: "Question 0?" }))
/** The run store writing what the floor writes (and its owner record): what its files cost without the calls. */
const storeFiles = (i) =>
  Effect.flatMap(RunStore, (store) =>
    Effect.flatMap(store.makeRunDir(), (run) =>
      Effect.all([
        store.writeOwner(run),
        store.writePrompt(run, `Question ${i}?`),
        Effect.forEach(answers, (a, k) => store.writeResponse(run, k + 1, a.model, a.text), { concurrency: 5, discard: true }),
        store.writeFinal(run, words, sample.manifest)
      ], { discard: true })))
const variants = {
  whole: ["whole run, files on disk", (i) => runPipeline({ prompt: `Question ${i}?` })],
  noFiles: ["whole run, no files", (i) => Effect.provideService(runPipeline({ prompt: `Question ${i}?` }), RunStore, nowhere)],
  callModel: ["six callModel", (i) => each((m) => callModel(request(m, i), policy))],
  fold: [
    "six folds of the client's stream",
    (i) => Effect.flatMap(ModelClient, (c) => each((m) => foldAnswer(m, c.stream(request(m, i)))))
  ],
  bareWhole: ["bare Node: the whole prompt", async (i) => {
    const given = await Promise.all(candidates.map((m) => bareCall(m, `Question ${i}?`)))
    const final = await bareCall("t/synth", given.map((a) => a.text).join("\n\n"))
    await bareFiles(i, given, final.text)
  }],
  bareCalls: ["bare Node: six fetch calls", (i) => Promise.all(six.map((m) => bareCall(m, `Question ${i}?`)))],
  bareFiles: ["bare Node: the files", (i) => bareFiles(i, answers, words)],
  storeFiles: ["run store: the same files", storeFiles]
}
const chosen = (process.env.BENCH_VARIANTS ?? Object.keys(variants).join(",")).split(",")
const prompts = Number(process.env.BENCH_PROMPTS ?? 100)
/** Ten prompts at a time: the bare variants as promises, the others in Effect. */
const runAll = async (key) => {
  const variant = variants[key][1]
  const all = Array.from({ length: prompts }, (_, i) => i)
  if (!key.startsWith("bare")) {
    return runtime.runPromise(Effect.forEach(all, variant, { concurrency: 10, discard: true }))
  }
  await Promise.all(Array.from({ length: 10 }, async () => {
    for (let i = all.shift(); i !== undefined; i = all.shift()) await variant(i)
  }))
}
const cpuPerPrompt = async (key) => {
  const before = process.cpuUsage()
  await runAll(key)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / prompts
}
try {
  for (const key of chosen) await cpuPerPrompt(key) // warm-up
  const samples = Object.fromEntries(chosen.map((key) => [variants[key][0], []]))
  for (let round = 0; round < (process.env.BENCH_OPS ? 0 : Number(process.env.BENCH_ROUNDS ?? 7)); round++) {
    for (const key of chosen) samples[variants[key][0]].push(await cpuPerPrompt(key))
  }
  // The bare variants run no Effect: nothing to count.
  for (const key of process.env.BENCH_OPS ? chosen.filter((k) => !k.startsWith("bare")) : []) {
    Object.assign(counted, { ops: 0, fibers: 0 })
    await runAll(key)
    const per = `${Math.round(counted.ops / prompts)} operations, ${(counted.fibers / prompts).toFixed(1)} fibers`
    process.stdout.write(`${variants[key][0].padEnd(34)} ${per} / prompt\n`)
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  for (const [name, xs] of process.env.BENCH_OPS ? [] : Object.entries(samples)) {
    process.stdout.write(`${name.padEnd(34)} ${Math.round(median(xs))} µs/prompt  (${xs.map(Math.round).join(", ")})\n`)
  }
} finally {
  await runtime.dispose()
  server.kill("SIGTERM")
  fs.rmSync(out, { recursive: true, force: true })
}
