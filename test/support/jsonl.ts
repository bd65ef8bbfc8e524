/** A JSONL file's text: each value on a line as JSON, a string as it is (a line that is not JSON), and a last newline. */
export const jsonl = (lines: ReadonlyArray<unknown>): string =>
  lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n"

/** Two eval questions with frozen candidates (`m1`, `m2`): a strategy over them pays only its own step. */
export const FROZEN_TWO = [
  { id: "one", question: "How many dollars?", answer: "18", candidates: { m1: "A: 18", m2: "A: 26" } },
  { id: "two", question: "How many bolts?", answer: "3", candidates: { m1: "A: 3", m2: "A: 4" } }
] as const
