import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { computeBaselines, majorityAnswer, majorityVote } from "../../src/programs/eval/baselines.js"
import { type EvalItem, parseDataset, selectItems } from "../../src/programs/eval/dataset.js"
import { fromGsm8k, GSM8K_INSTRUCTION } from "../../src/programs/eval/gsm8k.js"
import { answerProblem, finalNumber, scorers } from "../../src/programs/eval/scorers.js"
import { wilson } from "../../src/programs/eval/stats.js"
import { repoRoot } from "../support/spawnCli.js"

// The eval's pure parts on table cases: scorers, majority vote, Wilson interval, sampling, dataset lines,
// and the built-in GSM8K file's published baselines.

describe("scorers", () => {
  it.each([
    ["A: 18", 18],
    ["so she makes 9 * 2 = $<<9*2=18>>18 every day\n#### 18", 18],
    ["Total: 1,234 apples\n#### 1,234", 1234],
    ["She earns **$18** a day.", 18],
    ["16 - 3 - 4 = 9 eggs; 9 * 2 = 18", 18],
    ["16-3=13", 13],
    ["The temperature drops to -5 degrees.", -5],
    ["Final answer: 42 (after 3 steps)", 42],
    ["#### 16 - 3 - 4 = 9", 9], // a `####` line holding its working: the value after the last `=`
    ["#### 7\n\nCheck: 3 + 4 = 7 and 10 more notes", 7],
    ["Job A: $15 * 2000 = $30000\nJob B pays 42,000\nA: 12000", 12000],
    ["It costs 18.50 dollars", 18.5],
    ["no number here", undefined]
  ])("finalNumber(%j) = %j", (text, expected) => {
    expect(finalNumber(text)).toBe(expected)
  })

  it.each(
    [
      ["numeric", "#### 18", "18", true],
      ["numeric", "The answer is 18.00", "18", true],
      ["numeric", "A: 17", "#### 18", false],
      ["numeric", "no idea", "18", false],
      ["exact", "Reasoning...\nAnswer: **Paris**.", "paris", true],
      ["exact", "Paris", "Paris, France", false],
      ["exact", "line one\n  Blue Whale  ", "blue whale", true],
      ["regex", "The capital is Paris.", "\\bparis\\b", true],
      ["regex", "The capital is Lyon.", "\\bparis\\b", false],
      ["choice", "Let me think... The answer is (C).", "C", true],
      ["choice", "**B**", "b", true],
      ["choice", "Options (A) and (B) fail, so (D)", "D", true],
      ["choice", "Answer: A", "(B)", false],
      ["choice", "The answer is a tricky one", "A", false]
    ] as const
  )("%s: %j against %j → %s", (scorer, response, answer, expected) => {
    expect(scorers[scorer].correct(response, answer)).toBe(expected)
  })

  it("says when an answer cannot be scored", () => {
    expect(answerProblem("regex", "(unclosed")).toMatch(/^not a valid regular expression/)
    expect(answerProblem("numeric", "Paris")).toBe("holds no number")
    expect(answerProblem("choice", "Paris")).toBe("is not a choice letter A to J")
    expect(answerProblem("exact", "anything")).toBeUndefined()
  })
})

describe("majority vote, interval, sample", () => {
  it("takes the plurality of the extracted answers; a tie goes to the earliest; no answer abstains", () => {
    const numeric = scorers.numeric
    expect(majorityAnswer(["A: 1", "A: 2", "A: 2"], numeric)).toBe("A: 2")
    expect(majorityAnswer(["A: 1", "A: 2", "A: 2.0", "A: 1"], numeric)).toBe("A: 1")
    expect(majorityAnswer(["no idea", "A: 3"], numeric)).toBe("A: 3")
    expect(majorityAnswer(["none", "nothing"], numeric)).toBeUndefined()
  })

  it("says when a vote is tied, and gives a tie to the answer of the candidate ranked first", () => {
    const numeric = scorers.numeric
    const answers = ["A: 1", "A: 2", "A: 3", "A: 2", "A: 1"]
    expect(majorityVote(answers, numeric)).toEqual({ answer: "A: 1", tied: true })
    // Candidate 3 ranked best: its answer (2) is one of the tied ones, so it wins.
    expect(majorityVote(answers, numeric, (i) => [4, 3, 2, 0, 1][i]!)).toEqual({ answer: "A: 2", tied: true })
    // Candidate 2 ranked best, but its answer (3) is not among the tied ones: the next ranked tied answer wins.
    expect(majorityVote(answers, numeric, (i) => [3, 2, 0, 4, 1][i]!)).toEqual({ answer: "A: 1", tied: true })
    expect(majorityVote(["A: 1", "A: 2", "A: 2"], numeric, (i) => -i)).toEqual({ answer: "A: 2", tied: false })
    expect(majorityVote(["A: 5", "none"], numeric)).toEqual({ answer: "A: 5", tied: false })
    expect(majorityVote(["none"], numeric)).toEqual({ answer: undefined, tied: false })
  })

  it("breaks tied votes toward the best single system by default, and reports the first-in-line vote and the tie count", () => {
    const item = (line: number, answer: string, weak: string, middle: string, strong: string): EvalItem => ({
      line,
      id: String(line),
      question: "q",
      answer,
      candidates: [{ model: "weak", content: weak }, { model: "middle", content: middle }, { model: "strong", content: strong }]
    })
    // strong is right 3 times, middle twice, weak once; items 3 and 4 are 1-1-1 ties.
    const items = [
      item(1, "1", "A: 1", "A: 1", "A: 1"),
      item(2, "2", "A: 9", "A: 2", "A: 2"),
      item(3, "3", "A: 7", "A: 8", "A: 3"),
      item(4, "4", "A: 5", "A: 7", "A: 6")
    ]
    const b = computeBaselines(items, scorers.numeric)!
    expect(b.bestSingle).toMatchObject({ model: "strong", correct: 3 })
    expect(b.tied).toBe(2)
    // Tied items go to strong: right on item 3, wrong on item 4. First in line gives both to weak, wrong on both.
    expect(b.majority).toMatchObject({ correct: 3, n: 4, tiePolicy: "best-single" })
    expect(b.majorityFirstInLine).toMatchObject({ correct: 2, n: 4, tiePolicy: "first-in-line" })
  })

  it("computes the Wilson interval", () => {
    const round = ([lo, hi]: readonly [number, number]) => [Number(lo.toFixed(4)), Number(hi.toFixed(4))]
    expect(round(wilson(0, 10))).toEqual([0, 0.2775])
    expect(round(wilson(5, 10))).toEqual([0.2366, 0.7634])
    expect(round(wilson(20, 20))).toEqual([0.8389, 1])
    expect(wilson(0, 0)).toEqual([0, 1])
  })

  it("draws the same sample for the same seed, in dataset order; --limit takes the first N after it", () => {
    const items = Array.from({ length: 100 }, (_, i) => i)
    const a = selectItems(items, { sample: 10, seed: 7 })
    expect(a).toHaveLength(10)
    expect(selectItems(items, { sample: 10, seed: 7 })).toEqual(a)
    expect([...a].sort((x, y) => x - y)).toEqual(a)
    expect(selectItems(items, { sample: 10, seed: 8 })).not.toEqual(a)
    expect(selectItems(items, { sample: 10, seed: 7, limit: 3 })).toEqual(a.slice(0, 3))
    expect(selectItems(items, { limit: 5, seed: 1 })).toEqual([0, 1, 2, 3, 4])
    expect(selectItems(items, { sample: 500, seed: 1 })).toEqual(items)
  })
})

describe("datasets", () => {
  const parse = (text: string, scorer: "numeric" | "regex" = "numeric") => parseDataset(text, { source: "d.jsonl", format: "eval", scorer })
  const problem = (text: string, scorer: "numeric" | "regex" = "numeric") =>
    Either.match(parse(text, scorer), { onLeft: (e) => e.message, onRight: () => "decoded" })

  it("decodes ids, answers and frozen candidates in their order", () => {
    const items = Either.getOrThrow(
      parse(
        `{"question": "q1", "answer": 18}\n\n{"id": "x", "question": "q2", "answer": "#### 3", "candidates": {"b": "A: 3", "a": "A: 4"}}\n`
      )
    )
    expect(items).toEqual(
      [
        { line: 1, id: "1", question: "q1", answer: "18", candidates: undefined },
        {
          line: 3,
          id: "x",
          question: "q2",
          answer: "#### 3",
          candidates: [{ model: "b", content: "A: 3" }, { model: "a", content: "A: 4" }]
        }
      ] satisfies ReadonlyArray<EvalItem>
    )
  })

  it("with a limit, decodes up to the last item it keeps: a bad line after it is not read, one before it still refuses", () => {
    // Windows line ends and a blank line: the numbers are the file's lines all the same.
    const text = `{"question": "q1", "answer": 1}\r\n\r\n{"question": "q3", "answer": 3}\r\n{"question": "q4"\r\n[]\r\n`
    const limited = (limit: number) =>
      Either.match(parseDataset(text, { source: "d.jsonl", format: "eval", scorer: "numeric", limit }), {
        onLeft: (e) => e.message,
        onRight: (items) => items.map((item) => `${item.line}:${item.question}`).join(" ")
      })
    expect(limited(1)).toBe("1:q1")
    expect(limited(2)).toBe("1:q1 3:q3")
    expect(limited(3)).toBe("d.jsonl line 4: not valid JSON (and 1 more bad line)")
    expect(problem(text)).toBe("d.jsonl line 4: not valid JSON (and 1 more bad line)")
    expect(Either.isLeft(parseDataset(`{"question": "q1", "answer": 1}\n[]\n{"question": "q3", "answer": 3}\n`, {
      source: "d.jsonl",
      format: "eval",
      scorer: "numeric",
      limit: 2
    }))).toBe(true)
  })

  it.each([
    [`{"question": "q"`, "d.jsonl line 1: not valid JSON"],
    [`["q"]`, `d.jsonl line 1: expected a JSON object like {"question": "...", "answer": "..."}`],
    [`{"question": " ", "answer": "1"}`, "d.jsonl line 1: question: must not be empty"],
    [
      `{"question": "q", "answer": "1", "candidate": {"a": "1"}}`,
      `d.jsonl line 1: candidate: is unexpected, expected: "id" | "question" | "answer" | "candidates"`
    ],
    [
      `{"question": "q", "answer": "1", "candidates": {}}`,
      "d.jsonl line 1: candidates: needs at least one candidate (or leave the key out)"
    ],
    [`{"question": "q", "answer": "1", "candidates": {"a": 1}}`, "d.jsonl line 1: candidates.a: Expected string, actual 1"],
    [`{"question": "q", "answer": "many"}`, "d.jsonl line 1: answer: holds no number (scorer numeric)"],
    [
      `{"id": 1, "question": "q", "answer": "1"}\n{"id": "1", "question": "r", "answer": "2"}`,
      `d.jsonl line 2: id: "1" is already the id of line 1`
    ],
    [``, `d.jsonl holds no question (one JSON object per line: {"question": "...", "answer": "..."})`]
  ])("refuses %j: %s", (text, message) => {
    expect(problem(text)).toBe(message)
  })

  it.each([
    ["3:30", "answer: is ambiguous (3:30: a time or a ratio?) (scorer numeric)"],
    ["18-20", "answer: is a range (18-20), not a single value (scorer numeric)"],
    ["18 to 20", "answer: is a range (18 to 20), not a single value (scorer numeric)"],
    ["#### 18–20", "answer: is a range (18–20), not a single value (scorer numeric)"],
    ["1/0", "answer: cannot read 1/0 as a number (scorer numeric)"]
  ])("refuses the numeric dataset answer %j, naming the line", (answer, message) => {
    expect(problem(`{"question": "q", "answer": "1"}\n{"question": "q", "answer": ${JSON.stringify(answer)}}`)).toBe(
      `d.jsonl line 2: ${message}`
    )
  })

  it("reads a numeric dataset answer unambiguously: a fraction, a Unicode minus, a worked solution, separators", () => {
    const answerOf = (answer: string) => {
      const items = Either.getOrThrow(parse(JSON.stringify({ question: "q", answer })))
      return finalNumber(items[0]!.answer)
    }
    expect(answerOf("1/2")).toBe(0.5)
    expect(answerOf("\u22125")).toBe(-5)
    expect(answerOf(".5")).toBe(0.5)
    expect(answerOf("1\u2009234")).toBe(1234)
    expect(answerOf("1.5e3")).toBe(1500)
    expect(answerOf("She makes 9 * 2 = $18.\n#### 9 x 2 = 18")).toBe(18)
  })

  it("checks a regex answer compiles", () => {
    expect(problem(`{"question": "q", "answer": "(a"}`, "regex")).toMatch(/^d\.jsonl line 1: answer: not a valid regular expression/)
  })

  it("the built-in GSM8K file's baselines: best single 56.3 %, vote 56.3 % (44.3 % first in line, 527 ties), oracle 67.2 %", () => {
    const text = fs.readFileSync(path.join(repoRoot, "data", "gsm8k-frozen-candidates.jsonl"), "utf8")
    const items = Either.getOrThrow(parseDataset(text, { source: "gsm8k", format: "gsm8k", scorer: "numeric" }))
    expect(items).toHaveLength(1319)
    const b = computeBaselines(items, scorers.numeric)!
    expect(b.bestSingle).toMatchObject({ model: "175b_verification", correct: 742, n: 1319 })
    expect(b.majority.correct).toBe(743)
    expect(b.majorityFirstInLine.correct).toBe(584)
    expect(b.tied).toBe(527)
    expect(b.oracle.correct).toBe(887)
    expect([b.bestSingle, b.majority, b.majorityFirstInLine, b.oracle].map((a) => (a.accuracy * 100).toFixed(1)))
      .toEqual(["56.3", "56.3", "44.3", "67.2"])
    expect(b.candidates.map((c) => [c.model, (c.accuracy * 100).toFixed(1)])).toEqual([
      ["6b_finetuning", "21.7"],
      ["6b_verification", "39.0"],
      ["175b_finetuning", "34.7"],
      ["175b_verification", "56.3"]
    ])
    // The scorer agrees with the upstream file's own correctness flag on every one of the 5,276 solutions.
    const upstream = text.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)
    let disagreements = 0
    for (const line of upstream) {
      for (const value of Object.values(line)) {
        if (typeof value !== "object" || value === null || !("is_correct" in value) || !("solution" in value)) continue
        if (scorers.numeric.correct(String(value.solution), String(line.ground_truth)) !== value.is_correct) disagreements++
      }
    }
    expect(disagreements).toBe(0)
  })

  it("converts an upstream GSM8K line: the question with the answer-format instruction, the final number, the four systems in order", () => {
    const solution = (text: string, ok: boolean) => ({ is_correct: ok, solution: text })
    const item = fromGsm8k({
      question: "How many?",
      ground_truth: "2 + 1 = <<2+1=3>>3\nA: 3",
      "6b_finetuning": solution("A: 3", true),
      "6b_verification": solution("A: 4", false),
      "175b_finetuning": solution("A: 250", false),
      "175b_verification": solution("A: 3", true)
    })
    expect(item.question).toBe(`How many?${GSM8K_INSTRUCTION}`)
    expect(item.answer).toBe("3")
    expect(Object.entries(item.candidates)).toEqual([
      ["6b_finetuning", "A: 3"],
      ["6b_verification", "A: 4"],
      ["175b_finetuning", "A: 250"],
      ["175b_verification", "A: 3"]
    ])
  })
})
