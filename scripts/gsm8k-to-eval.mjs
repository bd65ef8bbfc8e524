// Converts GSM8K with frozen candidates from its upstream format (openai/grade-school-math,
// example_model_solutions.jsonl: question, ground_truth, four systems' { is_correct, solution }) into an
// eval dataset (question, answer, candidates), with the same decoding and the same answer-format
// instruction as `parallel-llm eval --dataset gsm8k`. Needs a built checkout (`npm run build`).
//
//   node scripts/gsm8k-to-eval.mjs [UPSTREAM.jsonl] > gsm8k.eval-dataset.jsonl      (stdin without a file)
//
// The upstream data is MIT-licensed, copyright 2021 OpenAI: keep data/gsm8k-LICENSE.txt with any copy.
import * as fs from "node:fs"
import { parseDataset, toEvalJsonl } from "../dist/programs/eval/dataset.js"

const file = process.argv[2]
const text = fs.readFileSync(file ?? 0, "utf8")
const parsed = parseDataset(text, { source: file ?? "stdin", format: "gsm8k", scorer: "numeric" })
if (parsed._tag === "Left") {
  process.stderr.write(`gsm8k-to-eval: ${parsed.left.message}\n`)
  process.exit(2)
}
process.stdout.write(toEvalJsonl(parsed.right))
