import { stripControl } from "../../domain/text.js"

// The numeric scorer's reading of a final answer, as people and the common evaluation harnesses write it
// (lm-evaluation-harness's GSM8K `#### ` and flexible-extract, simple-evals' `Answer:`, MATH's `\boxed{}`).
// A few named rules are tried in order; the first that applies decides:
//   1. the last `####` line whose content is a value, or an expression of numbers ending in `= value`
//      (a Markdown heading such as `#### Step 2` is not one, before or after the answer);
//   2. the last `\boxed{…}`;
//   3. the last answer marker: "the answer is …" anywhere, `Answer:`, `Final answer:` or `A:` at a line's
//      start, in any case (a marker holding the working gives the value after its last `=`);
//   4. the last number of the text.
// A range (`18-20`, `18–20`, `18 to 20`, `between 18 and 20`) or a clock time (`3:30`) is never read as a
// single value. The dataset's answer is read by the same rules, so "#### 18" and "18" are the same reference.

/** A value, or why the text gives none. */
export type Reading = { readonly value: number } | { readonly problem: string }

const CURRENCY = String.raw`[$€£¥₹]`
/** A number as written: sign, digits or a leading dot, decimals, exponent, and an optional `/denominator`. */
const NUMBER = String.raw`(\d+(?:\.\d+)?|\.\d+)(?:e([-+]?\d+)(?![a-z\d]))?(?:\/(\d+(?:\.\d+)?)(?![\d/]))?`
/** A value at the start of a segment: emphasis, brackets, currency and a sign may come first. */
const LEADING_VALUE = new RegExp(String.raw`^[\s*_(\[]*(?:US|USD|Rs\.?)?\s*([-+])?\s*${CURRENCY}?\s*([-+])?\s*${NUMBER}`, "i")
/** What after a value makes it not a single value. */
const RANGE_AFTER = new RegExp(String.raw`^\s*(?:-|–|—|to)\s*${CURRENCY}?\s*[-+]?\.?\d`, "i")
const TIME_AFTER = /^:\d/

/** Unicode minus, digit-group separators (comma, space, thin or no-break space) and LaTeX spacing normalised away. */
export const normalizeNumbers = (text: string): string =>
  text
    .replace(/\u2212/g, "-")
    .replace(/\{,\}|\\[,!;: ]/g, (m) => (m === "{,}" ? "," : "\u2009"))
    .replace(/(?<![\d.,])\d{1,3}(?:[,\u2009\u202f\u00a0 ]\d{3})+(?!\d|,\d)/g, (m) => m.replace(/[,\u2009\u202f\u00a0 ]/g, ""))
    .replace(/\\[dt]?frac\{([^{}]+)\}\{([^{}]+)\}/g, "$1/$2")

/** The value a segment starts with, refusing a range or a time; undefined when it does not start with a number. */
export const leadingValue = (segment: string): Reading | undefined => {
  const match = LEADING_VALUE.exec(segment)
  if (match === null) return undefined
  const rest = segment.slice(match[0].length)
  if (RANGE_AFTER.test(rest)) return rangeProblem(oneLine(segment))
  if (TIME_AFTER.test(rest)) return timeProblem(oneLine(segment))
  const [written, sign1, sign2, digits, exponent, denominator] = match
  const value = Number(digits) * 10 ** Number(exponent ?? 0) / Number(denominator ?? 1)
  if (!Number.isFinite(value)) return { problem: `cannot read ${oneLine(written)} as a number` }
  return { value: (sign1 ?? sign2) === "-" ? -value : value }
}

/** A dataset's text in a message: one line, no control character, at most 40 characters from its start or end. */
const flat = (text: string) => stripControl(text).replace(/\s+/g, " ").trim()
const oneLine = (text: string) => flat(text).slice(0, 40)
const tail = (text: string) => {
  const line = flat(text)
  return line.length > 40 ? `…${line.slice(-40)}` : line
}
const rangeProblem = (shown: string): Reading => ({ problem: `is a range (${shown}), not a single value` })
const timeProblem = (shown: string): Reading => ({ problem: `is ambiguous (${shown}: a time or a ratio?)` })

/** The part after the last `=` (an answer that holds its working), else all of it. */
const afterLastEquals = (segment: string) => segment.slice(segment.lastIndexOf("=") + 1)

/** Rule 1: the last `####` line that is a value or an arithmetic expression ending in one. */
const hashRule = (text: string): Reading | undefined => {
  const lines = [...text.matchAll(/^[\s>]*####(?!#)(.*)$/gm)].map((m) => (m[1] ?? "").replace(/[*_`]/g, ""))
  for (const content of lines.reverse()) {
    const working = content.slice(0, Math.max(0, content.lastIndexOf("=")))
    // Only numbers and operators before the last `=`: `#### 9 x 2 = 18`, not `#### Step 2: …`.
    if (!/^[\d\s.,+\-*/×x÷()$€£%^<>]*$/i.test(working)) continue
    const reading = leadingValue(afterLastEquals(content))
    if (reading !== undefined) return reading
  }
  return undefined
}

/** The content of the last `\boxed{…}`, nested braces balanced. */
const lastBoxed = (text: string): string | undefined => {
  const start = text.lastIndexOf("\\boxed{")
  if (start < 0) return undefined
  let depth = 0
  for (let i = start + 6; i < text.length; i++) {
    if (text[i] === "{") depth++
    else if (text[i] === "}" && --depth === 0) return text.slice(start + 7, i)
  }
  return undefined
}

/** Rule 2: the last `\boxed{…}`; one holding no number gives no answer. */
const boxedRule = (text: string): Reading | undefined => {
  const content = lastBoxed(text)
  if (content === undefined) return undefined
  const plain = content.replace(/\\text\{([^{}]*)\}/g, "$1").replace(/\\([$%])/g, "$1")
  return firstValue(afterLastEquals(plain)) ?? { problem: `\\boxed{${oneLine(content)}} holds no number` }
}

/** Where a number starts (not inside a word, nor the subtrahend of `16-3`). */
const NUMBER_START = new RegExp(String.raw`(?<![\w.)\]])[-+]?${CURRENCY}?\s*(?:\d|\.\d)`)
const EVERY_NUMBER = new RegExp(String.raw`(?<![\w.)\]])-?${CURRENCY}?-?${NUMBER}`, "gi")

/** The first value in a segment, words before it skipped ("approximately 18"). */
const firstValue = (segment: string): Reading | undefined => {
  const at = segment.search(NUMBER_START)
  if (at < 0) return undefined
  // "between 18 and 20" is a range as much as "18-20" is.
  if (/\bbetween\s*$/i.test(segment.slice(0, at))) return rangeProblem(oneLine(segment))
  return leadingValue(segment.slice(at))
}

const MARKER = /(?:^[\s>*_#]*(?:final\s+answer|answer|a)[*_\s]*[:：]|\banswer[*_\s]*(?:is|was|would be|=|:)\s*:?)/gim

/** Rule 3: the last answer marker; the segment ends at a sentence's end, so a check after it does not count. */
const statedRule = (text: string): Reading | undefined => {
  const marker = [...text.matchAll(MARKER)].at(-1)
  if (marker === undefined) return undefined
  const after = text.slice((marker.index ?? 0) + marker[0].length)
  const [line = "", next = ""] = after.split("\n").filter((l, i) => i === 0 || l.trim() !== "")
  const segment = (line.trim() === "" ? next : line).split(/(?<!\d)\.(?!\d)|\.\s|;|\s\(|\b(?:check|because|since|which)\b/i)[0] ?? ""
  return firstValue(afterLastEquals(segment))
}

/** Rule 4: the last number of the text (a range or a time there is no value). */
const lastNumberRule = (text: string): Reading | undefined => {
  const last = [...text.matchAll(EVERY_NUMBER)].at(-1)
  if (last === undefined) return undefined
  const before = text.slice(0, last.index)
  if (/\d\s*(?:–|—|\bto)\s*$|\d-$|\bbetween\s+\S*\d\S*\s+and\s*$/i.test(before)) {
    return rangeProblem(tail(text))
  }
  if (/\d:$/.test(before)) return timeProblem(tail(text))
  return leadingValue(text.slice(last.index))
}

/** The final answer of a response or a dataset answer, by the first rule that applies. */
export const readFinalNumber = (text: string): Reading => {
  const normalized = normalizeNumbers(text)
  for (const rule of [hashRule, boxedRule, statedRule, lastNumberRule]) {
    const reading = rule(normalized)
    if (reading !== undefined) return reading
  }
  return { problem: "holds no number" }
}
