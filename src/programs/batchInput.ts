import { ParseResult, Schema } from "effect"
import { sha256Hex } from "../domain/hash.js"
import { oneLine } from "../domain/text.js"
import { perCallFields } from "../settings/perCall.js"

// The input of a batch: one JSON prompt per line, checked line by line before anything is paid for.

const NonBlank = Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || "must not be empty"))

/** One line of the input file. Unknown keys are refused: a misspelt `models` must not silently run the defaults. */
export const BatchLine = Schema.Struct({
  id: Schema.optional(Schema.Union(NonBlank, Schema.Number.pipe(Schema.int()))),
  prompt: NonBlank,
  // A line's own settings, checked as an MCP call's are (see settings/perCall.ts); runBatch applies them.
  ...perCallFields("models", "synthesizer")
})

const decodeLine = Schema.decodeUnknownEither(BatchLine, { onExcessProperty: "error" })
const parseJson = Schema.decodeUnknownEither(Schema.parseJson())

/** Why a line is not a prompt, in one short sentence. */
const lineProblem = (raw: string): string | typeof BatchLine.Type => {
  const parsed = parseJson(raw)
  if (parsed._tag === "Left") {
    // The tree's last line is JSON.parse's own message.
    const tree = ParseResult.TreeFormatter.formatErrorSync(parsed.left).split("\n")
    return `not valid JSON (${oneLine((tree[tree.length - 1] ?? "").replace(/^[\s└├│─]+/, ""))})`
  }
  const json = parsed.right
  if (typeof json !== "object" || json === null || Array.isArray(json)) return `expected a JSON object like {"prompt": "..."}`
  const decoded = decodeLine(json)
  if (decoded._tag === "Right") return decoded.right
  return ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : ""}${oneLine(issue.message)}`)
    .join("; ")
}

/** A prompt to run, from one good line. */
export interface BatchItem {
  /** 1-based line number in the input file. */
  readonly line: number
  /** The line's `id`, or its line number. */
  readonly id: string
  readonly prompt: string
  readonly models: ReadonlyArray<string> | undefined
  readonly synthesizer: string | undefined
  readonly promptSha256: string
}

/** A line that cannot be run: not JSON, or not a prompt. */
export interface BadLine {
  readonly line: number
  readonly id: string
  readonly message: string
}

/** An id given to more than one line, with those lines' numbers. */
export interface DuplicateId {
  readonly id: string
  readonly lines: ReadonlyArray<number>
}

/** Every non-blank line, as an item or the reason it is not one; ids default to the line number, and repeated ones are listed. */
export const parseBatchInput = (
  text: string
): { readonly items: ReadonlyArray<BatchItem>; readonly bad: ReadonlyArray<BadLine>; readonly duplicates: ReadonlyArray<DuplicateId> } => {
  const items: Array<BatchItem> = []
  const bad: Array<BadLine> = []
  const linesOf = new Map<string, Array<number>>()
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1
    if (raw.trim() === "") return
    const value = lineProblem(raw)
    if (typeof value === "string") {
      bad.push({ line, id: String(line), message: `line ${line}: ${value}` })
      return
    }
    const id = value.id === undefined ? String(line) : String(value.id).trim()
    const lines = linesOf.get(id)
    if (lines !== undefined) {
      lines.push(line)
      return
    }
    linesOf.set(id, [line])
    items.push({
      line,
      id,
      prompt: value.prompt,
      models: value.models,
      synthesizer: value.synthesizer,
      promptSha256: sha256Hex(value.prompt)
    })
  })
  const duplicates = [...linesOf].filter(([, lines]) => lines.length > 1).map(([id, lines]) => ({ id, lines }))
  return { items, bad, duplicates }
}

const SHOWN_DUPLICATES = 5

/**
 * Why a file with repeated ids is refused before any call: the results file's last line for an id is that
 * prompt's state, so two prompts under one id would overwrite each other's (an answered one shown failed, or
 * a different prompt taken as answered).
 */
export const duplicateIdsMessage = (file: string, duplicates: ReadonlyArray<DuplicateId>): string => {
  const listed = duplicates.slice(0, SHOWN_DUPLICATES).map(({ id, lines }) =>
    `${JSON.stringify(id)} on lines ${lines.slice(0, -1).join(", ")} and ${lines.at(-1)}`
  )
  const more = duplicates.length > SHOWN_DUPLICATES ? ` and ${duplicates.length - SHOWN_DUPLICATES} more` : ""
  return `${file}: duplicate id${duplicates.length === 1 ? "" : "s"} ${listed.join("; ")}${more}: each line needs an id of its own`
}
