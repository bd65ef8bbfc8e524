import { Either, Schema } from "effect"
import { readFinalNumber } from "./numeric.js"

// How an answer is judged right. Each scorer reads the *final* answer out of a free-form response the same
// way for a model's answer and for the dataset's reference, so a reference may be a bare value ("18") or a
// worked solution that ends with one ("... #### 18").

export const ScorerName = Schema.Literal("numeric", "exact", "regex", "choice")
export type ScorerName = typeof ScorerName.Type

export interface Scorer {
  readonly name: ScorerName
  /**
   * The response's final answer in a comparable form (what a majority vote counts), or undefined when it
   * gives none.
   */
  readonly extract: (response: string) => string | undefined
  /** Whether the response is right, given the dataset's `answer`. */
  readonly correct: (response: string, answer: string) => boolean
}

/** The text after the last line that starts with a final-answer marker (`####`, `A:`, `Answer:`, `Final answer:`). */
const markedAnswer = (text: string): string | undefined => {
  let found: string | undefined
  for (const match of text.matchAll(/^[\s>*_#]*(?:####|A:|(?:the\s+)?(?:final\s+)?answer\s*(?:is\b|:))(.*)$/gim)) {
    found = match[1]
  }
  return found
}

/**
 * Texts already read, and what they gave: the baselines read each candidate's answer three times or more (its own
 * score, the vote, the oracle) and each item's answer once per candidate (GSM8K's built-in file: 18,222 readings of
 * 5,276 texts). Bounded: emptied when full.
 */
const readings = new Map<string, number | undefined>()
const READINGS_KEPT = 8192

/** The final number of a response or of a dataset answer (see `numeric.ts`), or undefined when it gives none. */
export const finalNumber = (text: string): number | undefined => {
  if (readings.has(text)) return readings.get(text)
  const reading = readFinalNumber(text)
  const value = "value" in reading ? reading.value : undefined
  if (readings.size >= READINGS_KEPT) readings.clear()
  readings.set(text, value)
  return value
}

/** Case, surrounding space, Markdown emphasis, quotes and a closing full stop do not count. */
export const normalizeText = (text: string): string =>
  text.replace(/[*_`]/g, "").replace(/\s+/g, " ").trim().replace(/^["'“”]+|["'“”]+$/g, "").replace(/[.。]+$/, "").trim().toLowerCase()

/** The marked final answer, else the last non-blank line. */
const finalText = (text: string): string | undefined => {
  const marked = markedAnswer(text)
  const line = marked !== undefined && marked.trim() !== "" ? marked : text.split("\n").filter((l) => l.trim() !== "").at(-1)
  return line === undefined ? undefined : normalizeText(line)
}

const LETTER = "([A-J])"

/** A multiple-choice letter: after an answer marker, else the last "(X)", else a response that is just the letter. */
export const finalChoice = (text: string): string | undefined => {
  const stated = [...text.matchAll(new RegExp(`[Aa]nswer\\s*(?:is|:)?\\s*[:\\-]?\\s*[*_(\\[]*${LETTER}(?![\\w])`, "g"))].at(-1)
  const hashed = text.match(new RegExp(`^\\s*####\\s*[*_(\\[]*${LETTER}(?![\\w])`, "im"))
  const bracketed = [...text.matchAll(new RegExp(`\\(${LETTER}\\)`, "g"))].at(-1)
  const alone = text.trim().match(new RegExp(`^[*_(\\[]*${LETTER}[)\\].:]?[*_]*$`, "i"))
  const letter = stated?.[1] ?? hashed?.[1] ?? bracketed?.[1] ?? alone?.[1]
  return letter?.toUpperCase()
}

const numeric: Scorer = {
  name: "numeric",
  extract: (response) => {
    const n = finalNumber(response)
    return n === undefined ? undefined : String(n)
  },
  correct: (response, answer) => {
    const got = finalNumber(response)
    const want = finalNumber(answer)
    return got !== undefined && want !== undefined && Math.abs(got - want) <= 1e-6 * Math.max(1, Math.abs(want))
  }
}

const exact: Scorer = {
  name: "exact",
  extract: finalText,
  correct: (response, answer) => {
    const got = finalText(response)
    return got !== undefined && got === finalText(answer)
  }
}

const choice: Scorer = {
  name: "choice",
  extract: finalChoice,
  correct: (response, answer) => {
    const got = finalChoice(response)
    return got !== undefined && got === (finalChoice(answer) ?? normalizeText(answer).toUpperCase())
  }
}

/** The dataset's `answer` is a JavaScript regular expression (case-insensitive) the response must match somewhere. */
const regex: Scorer = {
  name: "regex",
  extract: finalText,
  correct: (response, answer) => new RegExp(answer, "i").test(response)
}

export const scorers: Readonly<Record<ScorerName, Scorer>> = { numeric, exact, regex, choice }

/** Why an answer cannot be used with a scorer (an invalid regular expression), or undefined. */
export const answerProblem = (scorer: ScorerName, answer: string): string | undefined => {
  if (scorer === "regex") {
    const compiled = Either.try(() => new RegExp(answer, "i"))
    if (Either.isLeft(compiled)) {
      const e = compiled.left
      return `not a valid regular expression (${e instanceof Error ? e.message : String(e)})`
    }
  }
  if (scorer === "numeric") {
    const reading = readFinalNumber(answer)
    if ("problem" in reading) return reading.problem
  }
  if (scorer === "choice" && finalChoice(answer) === undefined && !/^[A-J]$/i.test(normalizeText(answer))) {
    return "is not a choice letter A to J"
  }
  return undefined
}
