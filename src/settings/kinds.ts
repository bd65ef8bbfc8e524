import { Schema } from "effect"
import { FallbackList, ModelId, ModelList } from "../domain/model.js"
import { ReasoningEffort } from "../domain/modelOptions.js"
import { headerCharacterProblem } from "./headerCharacters.js"
import { ModelEntries, ModelEntry } from "./modelEntries.js"

/**
 * The kinds of value a setting holds. A kind knows how its value is written everywhere it can come from:
 * as text (a flag or an environment variable, and the config file's value turned to text, so that one
 * schema and one message check all three), as JSON in the config file, and as JSON in `get_config`.
 */
export interface Kind<A> {
  /** The value as text: flags, environment, and the config file's value stringified. */
  readonly text: Schema.Schema<A, string>
  /** What the config file may hold for it (before it is turned to text). */
  readonly file: Schema.Schema.AnyNoContext
  /** How `--help` shows the flag's value, and which @effect/cli option carries it. */
  readonly flag: "text" | "integer" | "number" | "list" | "on" | "off"
  /** The value as a plain JSON value (a number stays a number), for per-call overrides. */
  readonly plain: Schema.Schema<A>
  /** The value's JSON shape once converted, as `get_config` shows it. */
  readonly json: Schema.Schema.AnyNoContext
  /** A number's bounds, for the JSON Schema of a per-call override. */
  readonly bounds?: Bounds
}

const withinBounds = (min: number, max: number, integer: boolean) => (n: number) =>
  integer
    ? (Number.isInteger(n) && n >= min && n <= max) || `must be a whole number from ${min} to ${max}, got ${n}`
    : (n >= min && n <= max) || `must be between ${min} and ${max}, got ${n}`

/** A number within bounds; `plain` uses Schema's own filters so that the JSON Schema of a tool states them. */
export const boundedNumber = (min: number, max: number, integer: boolean): Schema.Schema<number> =>
  integer ? Schema.Number.pipe(Schema.int(), Schema.between(min, max)) : Schema.Number.pipe(Schema.between(min, max))

/** A number written as text; a word that is none is refused saying what was expected (not Schema's own words). */
const numberText = (integer: boolean): Schema.Schema<number, string> =>
  Schema.NumberFromString.annotations({
    message: (issue) => `expected ${integer ? "a whole number" : "a number"}, got ${JSON.stringify(issue.actual)}`
  })

/** A whole number written as text: what a command's own integer flags take (`--runs`, `--port`). */
export const WholeNumberText: Schema.Schema<number, string> = numberText(true).pipe(
  Schema.filter((n) => Number.isInteger(n) || `expected a whole number, got ${n}`)
)

const numeric = (min: number, max: number, integer: boolean): Kind<number> => ({
  text: numberText(integer).pipe(Schema.filter(withinBounds(min, max, integer))),
  file: Schema.Number,
  flag: integer ? "integer" : "number",
  plain: boundedNumber(min, max, integer),
  json: Schema.Number,
  bounds: { min, max, integer }
})

export interface Bounds {
  readonly min: number
  readonly max: number
  readonly integer: boolean
}

export const integerIn = (min: number, max: number) => numeric(min, max, true)

/** How many runs `runs --limit` lists: at least one (0 or less would still list some, or mean nothing). */
export const RunsLimit: Schema.Schema<number, string> = integerIn(1, 10_000).text
export const numberIn = (min: number, max: number) => numeric(min, max, false)

/** A URL without its user name and password, for messages: they must never be printed. */
export const withoutUserinfo = (s: string): string => s.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, "$1")

const HttpUrl = Schema.String.pipe(
  Schema.filter((s) => {
    const url = URL.canParse(s) ? new URL(s) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return `expected an http(s) URL, got ${JSON.stringify(withoutUserinfo(s))}`
    }
    // Refused rather than stripped: the URL is recorded in manifests and shown by `config` and `get_config`.
    return (url.username === "" && url.password === "") ||
      "a user name or password in the URL is not accepted (it would be recorded); put the key in OPENROUTER_API_KEY"
  })
)

export const url: Kind<string> = { text: HttpUrl, file: Schema.String, flag: "text", plain: Schema.String, json: Schema.String }

const NonEmpty = Schema.Trim.pipe(Schema.nonEmptyString({ message: () => "must not be empty" }))

export const nonEmptyText: Kind<string> = { text: NonEmpty, file: Schema.String, flag: "text", plain: Schema.String, json: Schema.String }

/** Text sent as an HTTP header's value (`X-Title`): a character no header carries would fail every call. */
export const headerText: Kind<string> = {
  ...nonEmptyText,
  text: NonEmpty.pipe(Schema.filter((s) => headerCharacterProblem(s) ?? true))
}

/** One model id as a call gives it (checked as an id; a plain string in a tool's JSON Schema). */
export const ModelArgument: Schema.Schema<string> = Schema.compose(Schema.String, ModelId).annotations({ jsonSchema: { type: "string" } })

/** One model id; in the config file also an object with the model's options (see modelEntries.ts). */
export const modelId: Kind<string> = { text: ModelId, file: ModelEntry, flag: "text", plain: Schema.String, json: Schema.String }

/** What a preset's name may be: plain enough to print anywhere (also checked on the file's `presets` keys). */
export const PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

const PresetNameText = Schema.Trim.pipe(
  Schema.filter((s) => PRESET_NAME.test(s) || `expected a preset name (letters, digits, '.', '_', '-'), got ${JSON.stringify(s)}`)
)

/** The name of a preset of the config file: plain enough to print anywhere. */
export const presetName: Kind<string> = {
  text: PresetNameText,
  file: Schema.String,
  flag: "text",
  plain: Schema.String,
  json: Schema.String
}

const ListInFile = Schema.Union(Schema.Array(Schema.String), Schema.String)

/** Model ids: a repeatable flag, comma-separated in the environment, an array (of ids or model objects) in the file. */
export const modelList: Kind<ReadonlyArray<string>> = {
  text: ModelList,
  file: ModelEntries,
  flag: "list",
  plain: Schema.Array(Schema.String),
  json: Schema.Array(Schema.String)
}

/** Like `modelList`, but `none` (or an empty array) means no model at all. */
export const optionalModelList: Kind<ReadonlyArray<string>> = { ...modelList, text: FallbackList }

const BooleanFromText = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s) => /^(true|false|1|0|yes|no|on|off)$/i.test(s.trim()) || `expected true or false, got ${JSON.stringify(s)}`)
  ),
  Schema.Boolean,
  { strict: true, decode: (s) => /^(true|1|yes|on)$/i.test(s.trim()), encode: (b) => String(b) }
)

/** A switch whose flag turns it on (`--check-models`). */
export const switchOn: Kind<boolean> = {
  text: BooleanFromText,
  file: Schema.Boolean,
  flag: "on",
  plain: Schema.Boolean,
  json: Schema.Boolean
}
/** A switch whose flag turns it off (`--no-stream`). */
export const switchOff: Kind<boolean> = { ...switchOn, flag: "off" }

export const LogLevelName = Schema.Literal("debug", "info", "warning", "error")
export type LogLevelName = typeof LogLevelName.Type

export const logLevel: Kind<LogLevelName> = {
  text: Schema.compose(Schema.String, LogLevelName),
  file: Schema.String,
  flag: "text",
  plain: LogLevelName,
  json: Schema.String
}

/**
 * A list: a repeatable flag, comma-separated in the environment, an array (or that text) in the file. Each item of
 * the text is tidied (trimmed), the empty ones dropped, and the rest checked by `item`.
 */
const commaList = (item: Schema.Schema<string>, tidy: (s: string) => string = (s) => s.trim()): Kind<ReadonlyArray<string>> => ({
  text: Schema.transform(Schema.String, Schema.Array(item), {
    strict: true,
    decode: (s) => s.split(",").map(tidy).filter((t) => t !== ""),
    encode: (items) => items.join(",")
  }),
  file: ListInFile,
  flag: "list",
  plain: Schema.Array(Schema.String),
  json: Schema.Array(Schema.String)
})

const OriginText = Schema.String.pipe(
  Schema.filter((s) => {
    const url = URL.canParse(s) ? new URL(s) : undefined
    return (url !== undefined && (url.protocol === "http:" || url.protocol === "https:") && url.origin === s.replace(/\/$/, "")) ||
      `expected an origin such as https://app.example.com (scheme, host and port only), got ${JSON.stringify(s)}`
  })
)

/** Browser origins (`https://app.example.com`), a trailing slash dropped. */
export const originList = commaList(OriginText, (o) => o.trim().replace(/\/$/, ""))

/** Directories. */
export const pathList = commaList(Schema.String)

const DomainText = Schema.String.pipe(
  Schema.filter((s) =>
    /^[A-Za-z0-9*][A-Za-z0-9.*-]*(\/[^\s,]*)?$/.test(s) || `expected a domain such as example.com, got ${JSON.stringify(s)}`
  )
)

/** Web domains (`arxiv.org`, `example.com/docs`). */
export const domainList = commaList(DomainText)

/** One of a few names (`--strategy rank`): `text` reads and checks it, `plain` is the names themselves. */
export const oneOf = <A extends string>(text: Schema.Schema<A, string>, plain: Schema.Schema<A>): Kind<A> => ({
  text,
  file: Schema.String,
  flag: "text",
  plain,
  json: Schema.String
})

/** A reasoning effort: `low`, `medium` or `high`. */
export const reasoningEffort: Kind<ReasoningEffort> = oneOf(Schema.compose(Schema.Trim, ReasoningEffort), ReasoningEffort)
