import { Effect, Either, ParseResult, Schema } from "effect"
import { fileURLToPath } from "node:url"
import { UsageError } from "../../domain/errors.js"
import { sha256Hex } from "../../domain/hash.js"
import { readTextSafely, USER_FILE_READ } from "../../domain/safeFile.js"
import { oneLine } from "../../domain/text.js"
import { builtinDatasets, type DatasetFormat } from "./builtinDatasets.js"
import { fromGsm8k, Gsm8kLine } from "./gsm8k.js"
import { answerProblem, type ScorerName } from "./scorers.js"

// An eval dataset: JSONL, one question per line with its objective answer and, optionally, frozen candidate
// answers (model → answer text). With frozen candidates only the aggregation is paid for.

const NonBlank = Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "must not be empty"))

/** One line of an eval dataset. Unknown keys are refused: a misspelt `candidates` must not turn into paid calls. */
export const EvalLine = Schema.Struct({
  id: Schema.optional(Schema.Union(NonBlank, Schema.Number.pipe(Schema.int()))),
  question: NonBlank,
  answer: Schema.Union(NonBlank, Schema.Number),
  candidates: Schema.optional(
    Schema.Record({ key: NonBlank, value: NonBlank }).pipe(
      Schema.filter((r) => Object.keys(r).length > 0 || "needs at least one candidate (or leave the key out)")
    )
  )
})

export interface FrozenAnswer {
  readonly model: string
  readonly content: string
}

export interface EvalItem {
  /** 1-based line number in the dataset file. */
  readonly line: number
  /** The line's `id`, or its line number. */
  readonly id: string
  /** What the models are asked. */
  readonly question: string
  readonly answer: string
  /** Frozen candidate answers, in the line's order; undefined when the candidates are to be asked. */
  readonly candidates: ReadonlyArray<FrozenAnswer> | undefined
}

export interface Dataset {
  /** `gsm8k` for a built-in one, else the file name. */
  readonly name: string
  readonly file: string
  readonly items: ReadonlyArray<EvalItem>
  readonly defaultScorer: ScorerName
}

const issuesText = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    // An optional field's other branch ("Expected undefined") says nothing the first issue does not.
    .filter((issue, i, all) => i === 0 || all.length === 1 || !issue.message.startsWith("Expected undefined"))
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : ""}${oneLine(issue.message)}`)
    .join("; ")

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())
const decodeEval = Schema.decodeUnknownEither(EvalLine, { onExcessProperty: "error" })
const decodeGsm8k = Schema.decodeUnknownEither(Gsm8kLine)

/** One line as a dataset line, or why it is not one. */
const decodeLine = (raw: string, format: DatasetFormat): Either.Either<typeof EvalLine.Type, string> => {
  const json = parseJson(raw)
  if (Either.isLeft(json)) return Either.left("not valid JSON")
  const value = json.right
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left(`expected a JSON object like {"question": "...", "answer": "..."}`)
  }
  const line = format === "gsm8k" ? Either.map(decodeGsm8k(value), fromGsm8k) : Either.right(value)
  return Either.isLeft(line) ? Either.left(issuesText(line.left)) : Either.mapLeft(decodeEval(line.right), issuesText)
}

/**
 * Every line of a dataset as an item, or with `limit` the first that many: decoding stops at the last one needed,
 * so a long dataset is not decoded for a short run, and a line after it is not looked at. The first bad line
 * refuses the whole dataset (with how many others are bad): a score over a silently shortened dataset would not
 * be the score asked for.
 */
export const parseDataset = (
  text: string,
  options: { readonly source: string; readonly format: DatasetFormat; readonly scorer: ScorerName; readonly limit?: number | undefined }
): Either.Either<ReadonlyArray<EvalItem>, UsageError> => {
  const items: Array<EvalItem> = []
  const problems: Array<string> = []
  const firstLineOf = new Map<string, number>()
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    if (items.length === options.limit) break
    const line = index + 1
    if (raw.trim() === "") continue
    const decoded = decodeLine(raw, options.format)
    if (Either.isLeft(decoded)) {
      problems.push(`line ${line}: ${decoded.left}`)
      continue
    }
    const value = decoded.right
    const answer = String(value.answer)
    const wrongAnswer = answerProblem(options.scorer, answer)
    const id = value.id === undefined ? String(line) : String(value.id).trim()
    const first = firstLineOf.get(id)
    if (wrongAnswer !== undefined) problems.push(`line ${line}: answer: ${wrongAnswer} (scorer ${options.scorer})`)
    else if (first !== undefined) problems.push(`line ${line}: id: ${JSON.stringify(id)} is already the id of line ${first}`)
    else {
      firstLineOf.set(id, line)
      const candidates = value.candidates && Object.entries(value.candidates).map(([model, content]) => ({ model, content }))
      items.push({ line, id, question: value.question, answer, candidates })
    }
  }
  if (problems.length > 0) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more bad line${problems.length === 2 ? "" : "s"})` : ""
    return Either.left(new UsageError({ message: `${options.source} ${problems[0]}${more}` }))
  }
  if (items.length === 0) {
    return Either.left(
      new UsageError({ message: `${options.source} holds no question (one JSON object per line: {"question": "...", "answer": "..."})` })
    )
  }
  return Either.right(items)
}

/**
 * A built-in dataset by name (`gsm8k`), else a JSONL file in the eval format; with `limit`, its first that many
 * items only (the file is still read whole, within its cap).
 */
export const loadDataset = Effect.fn("eval.loadDataset")(function*(
  spec: string,
  scorer: ScorerName | undefined,
  limit?: number | undefined
) {
  const builtin = Object.hasOwn(builtinDatasets, spec) ? builtinDatasets[spec] : undefined
  const file = builtin ? fileURLToPath(builtin.file) : spec
  const text = yield* readTextSafely(file, USER_FILE_READ).pipe(
    Effect.mapError((e) => new UsageError({ message: `cannot read the dataset ${e.message}` }))
  )
  const defaultScorer = builtin?.scorer ?? "numeric"
  const items = yield* parseDataset(text, {
    source: builtin ? `dataset ${spec}` : file,
    format: builtin?.format ?? "eval",
    scorer: scorer ?? defaultScorer,
    limit
  })
  return { name: builtin ? spec : file, file, items, defaultScorer } satisfies Dataset
})

/** A small seeded generator (mulberry32): the same `--seed` picks the same sample on every machine. */
const random = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `--sample N --seed S` (N items drawn at random, kept in dataset order), then `--limit N` (the first N). */
export const selectItems = <A>(
  items: ReadonlyArray<A>,
  options: { readonly limit?: number | undefined; readonly sample?: number | undefined; readonly seed: number }
): ReadonlyArray<A> => {
  let chosen = items
  if (options.sample !== undefined && options.sample < items.length) {
    const next = random(options.seed)
    const order = items.map((_, i) => i)
    for (let i = 0; i < options.sample; i++) {
      const j = i + Math.floor(next() * (order.length - i))
      ;[order[i], order[j]] = [order[j]!, order[i]!]
    }
    chosen = order.slice(0, options.sample).sort((x, y) => x - y).map((i) => items[i]!)
  }
  return options.limit !== undefined ? chosen.slice(0, options.limit) : chosen
}

/** What a result was computed from: a result with another fingerprint is not reused. */
export const fingerprintOf = (parts: unknown): string => sha256Hex(JSON.stringify(parts)).slice(0, 32)

/** Items as an eval dataset file (what the GSM8K converter writes): one `{question, answer, candidates?}` per line. */
export const toEvalJsonl = (items: ReadonlyArray<EvalItem>): string =>
  items.map((item) =>
    `${
      JSON.stringify({
        question: item.question,
        answer: item.answer,
        ...(item.candidates ? { candidates: Object.fromEntries(item.candidates.map((c) => [c.model, c.content])) } : {})
      })
    }\n`
  ).join("")
