import { Schema } from "effect"
import { finalNumber } from "./scorers.js"

// GSM8K with frozen candidates, in its upstream format (openai/grade-school-math,
// `grade_school_math/data/example_model_solutions.jsonl`, MIT, copyright 2021 OpenAI): one problem per line
// with the reference solution and the solutions of four systems. The built-in `--dataset gsm8k` is that file,
// shipped unchanged in `data/` with its licence; this module turns each line into an eval item.

/** The four systems of the upstream file, in its order (the weakest first: a vote tie broken by line order favours it). */
export const GSM8K_SYSTEMS = ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"] as const

const Solution = Schema.Struct({ is_correct: Schema.Boolean, solution: Schema.String })

export const Gsm8kLine = Schema.Struct({
  question: Schema.String,
  ground_truth: Schema.String,
  "6b_finetuning": Solution,
  "6b_verification": Solution,
  "175b_finetuning": Solution,
  "175b_verification": Solution
})

/**
 * Appended to every GSM8K question: the candidates' solutions already end with `A: <number>`, and a
 * synthesis that ends the same way is scored on its answer rather than on whatever number it wrote last.
 */
export const GSM8K_INSTRUCTION = "\n\nEnd your answer with the final number alone on its own last line, after `####`."

/** One upstream line as an eval dataset line (`question`, `answer`, `candidates`). */
export const fromGsm8k = (line: typeof Gsm8kLine.Type) => {
  const answer = finalNumber(line.ground_truth)
  return {
    question: `${line.question}${GSM8K_INSTRUCTION}`,
    answer: answer === undefined ? line.ground_truth : String(answer),
    candidates: Object.fromEntries(GSM8K_SYSTEMS.map((system) => [system, line[system].solution]))
  }
}
