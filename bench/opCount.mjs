// Effect operations and fibers per prompt of a `batch` (200 prompts in the bench's target 1), counted rather than
// timed: the counts hardly move from run to run, so they judge a change on a machine too loaded for CPU figures.
// It copies the built bundle with a counter added to the fiber run loop and to the fiber constructor, runs the
// same batch of 20 and of 60 prompts against the token server (5 candidates + 1 synthesizer, 20-event answers),
// and prints the difference per prompt (start-up cancels out).   npm run build && node bench/opCount.mjs
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
fs.mkdirSync(path.join(root, "bench", "results"), { recursive: true })
const work = fs.mkdtempSync(path.join(root, "bench", "results", ".ops-"))
const dist = path.join(work, "dist")
fs.cpSync(path.join(root, "dist"), dist, { recursive: true })
// The bundle reads its version from ../package.json.
fs.copyFileSync(path.join(root, "package.json"), path.join(work, "package.json"))

const bundle = path.join(dist, "parallel-llm.cjs")
const patches = [
  ["this.currentOpCount+=1;", "this.currentOpCount+=1,globalThis.__ops++;"],
  // esbuild numbers the parameter's name after the other `fiberId`s of the bundle.
  [
    /constructor\((fiberId\d*),fiberRefs0,runtimeFlags0\)\{if\(super\(\),/g,
    "constructor($1,fiberRefs0,runtimeFlags0){if(super(),globalThis.__fibers++,"
  ]
]
let code = fs.readFileSync(bundle, "utf8")
for (const [from, to] of patches) {
  // A newer Effect or esbuild spells these differently: say so rather than count nothing.
  if ((typeof from === "string" ? code.split(from).length - 1 : [...code.matchAll(from)].length) !== 1) {
    throw new Error(`opCount: "${from}" is not in the bundle exactly once`)
  }
  code = code.replace(from, to)
}
const report = `globalThis.__ops=0;globalThis.__fibers=0;` +
  `process.on("exit",()=>process.stderr.write("\\nOPS "+globalThis.__ops+" "+globalThis.__fibers+"\\n"));`
fs.writeFileSync(bundle, `${report}\n${code}`)

const server = spawn(process.execPath, [path.join(root, "bench", "tokenServer.mjs"), "--events=20", "--delay=50"], {
  stdio: ["ignore", "pipe", "ignore"]
})
const url = await new Promise((resolve) => server.stdout.setEncoding("utf8").once("data", (line) => resolve(line.trim())))

/** Operations and fibers of one batch of `n` prompts, every answer checked. */
const count = (n) => {
  const dir = fs.mkdtempSync(path.join(work, "batch-"))
  const input = path.join(dir, "prompts.jsonl")
  fs.writeFileSync(input, Array.from({ length: n }, (_, i) => `${JSON.stringify({ prompt: `Question ${i + 1}?` })}\n`).join(""))
  const models = ["t/c1", "t/c2", "t/c3", "t/c4", "t/c5"].flatMap((m) => ["-m", m])
  const run = spawnSync(process.execPath, [
    path.join(dist, "main.js"),
    "batch",
    input,
    ...models,
    "-s",
    "t/synth",
    "--concurrency",
    "50",
    "--runs",
    "10"
  ], {
    encoding: "utf8",
    env: {
      PATH: process.env.PATH ?? "",
      HOME: work,
      OPENROUTER_BASE_URL: url,
      PARALLEL_LLM_OUTPUT_DIR: path.join(dir, "runs"),
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none",
      PARALLEL_LLM_LOG_LEVEL: "warning"
    }
  })
  const ok = fs.readFileSync(path.join(dir, "prompts.results.jsonl"), "utf8").split("\n").filter((l) => l.includes("\"ok\"")).length
  const counted = /OPS (\d+) (\d+)/.exec(run.stderr)
  if (run.status !== 0 || ok !== n || counted === null) throw new Error(`opCount: batch of ${n} exited ${run.status}, ${ok} ok`)
  return { ops: Number(counted[1]), fibers: Number(counted[2]) }
}

try {
  const [small, large] = [count(20), count(60)]
  const per = (key) => ((large[key] - small[key]) / 40).toFixed(key === "ops" ? 0 : 1)
  process.stdout.write(`per prompt: ${per("ops")} Effect operations, ${per("fibers")} fibers\n`)
} finally {
  server.kill("SIGTERM")
  fs.rmSync(work, { recursive: true, force: true })
}
