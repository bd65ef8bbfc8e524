// The bench's floor: what `parallel-llm batch` does, written in bare Node with nothing in the way —
// global fetch, SSE split by hand, the same files written the same way (temporary file, then rename).
// The bench runs it beside the project against the same server and reports the ratio of the two.
//   node bench/floor.mjs --url URL --input prompts.jsonl --out DIR --models a,b,c --synth s --concurrency 16 --runs 4
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { bareComplete, writeAtomic } from "./bare.mjs"

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    input: { type: "string" },
    out: { type: "string" },
    models: { type: "string" },
    synth: { type: "string" },
    concurrency: { type: "string", default: "16" },
    runs: { type: "string", default: "4" }
  }
})
const models = values.models.split(",")
const prompts = (await fs.readFile(values.input, "utf8")).trim().split("\n").map((line) => JSON.parse(line).prompt)

/** At most `n` at once, first come first served. */
const limiter = (n) => {
  let free = n
  const waiting = []
  return async (task) => {
    if (free > 0) free--
    else await new Promise((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else free++
    }
  }
}
const calls = limiter(Number(values.concurrency))
const runs = limiter(Number(values.runs))

const complete = (model, content) => calls(() => bareComplete(values.url, model, content))

const runOne = (prompt, index) =>
  runs(async () => {
    const dir = path.join(values.out, `run-${index}`)
    await fs.mkdir(path.join(dir, "responses"), { recursive: true, mode: 0o700 })
    await writeAtomic(path.join(dir, "prompt.md"), prompt)
    const answers = await Promise.all(models.map(async (model, i) => {
      const answer = await complete(model, prompt)
      await writeAtomic(path.join(dir, "responses", `${String(i + 1).padStart(2, "0")}-${model.replace(/\W+/g, "-")}.md`), answer.text)
      return answer
    }))
    const synthesis = await complete(values.synth, answers.map((a, i) => `Answer ${i + 1}:\n${a.text}`).join("\n\n"))
    await writeAtomic(path.join(dir, "final.md"), synthesis.text)
    await writeAtomic(
      path.join(dir, "run.json"),
      JSON.stringify({ prompt, candidates: answers.map((a) => ({ model: a.model, usage: a.usage })), status: "ok" }, null, 2)
    )
    return JSON.stringify({ index, status: "ok", final: synthesis.text.length }) + "\n"
  })

const lines = await Promise.all(prompts.map(runOne))
await fs.writeFile(path.join(values.out, "results.jsonl"), lines.join(""))
