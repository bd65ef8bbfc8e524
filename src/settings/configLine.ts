import { Either, ParseResult } from "effect"

// Which line of a config file a problem is on, so that a message can send the user straight to it; never the
// text itself (`--config /etc/shadow` must not print the file's first characters, as JSON.parse's message does).

/** The 1-based line of `offset` in `text`. */
const lineAt = (text: string, offset: number): number => text.slice(0, offset).split("\n").length

/**
 * Whether `prefix` could still begin a JSON text: it parses, or the parser stopped only at its end.
 * (Node's parser names no position for an unexpected token, so the position is found this way.)
 */
const viable = (prefix: string): boolean =>
  Either.match(Either.try(() => JSON.parse(prefix) as unknown), {
    onRight: () => true,
    onLeft: (error) => {
      const message = error instanceof Error ? error.message : String(error)
      const position = /at position (\d+)/.exec(message)
      return /end of JSON input/.test(message) || (position !== null && Number(position[1]) >= prefix.length)
    }
  })

/** Where the text stops being JSON: the longest viable prefix, found by bisection. Undefined for valid JSON. */
const syntaxErrorAt = (text: string): number | undefined => {
  if (Either.isRight(Either.try(() => JSON.parse(text) as unknown))) return undefined
  let good = 0
  let bad = text.length
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2)
    if (viable(text.slice(0, middle))) good = middle
    else bad = middle
  }
  // Cut short: the last thing written is where it ends.
  return viable(text) ? text.trimEnd().length : good
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The offset of the key at `path` (`presets.fast.models`): each key searched for after the one before it,
 * which finds the right one in any file a person writes (keys are unique in an object).
 */
const offsetOfPath = (text: string, path: ReadonlyArray<PropertyKey>): number | undefined => {
  let from = 0
  let found: number | undefined
  for (const key of path) {
    if (typeof key !== "string") continue
    const match = new RegExp(`"${escapeRegExp(key)}"\\s*:`).exec(text.slice(from))
    if (match === null) break
    found = from + match.index
    from = found + match[0].length
  }
  return found
}

/**
 * `, line N` for a config file that failed to decode: where it stops being JSON, or else the line of the
 * key its first issue is about; empty when neither is known.
 */
export const lineOfIssue = (text: string, error: ParseResult.ParseError): string => {
  const offset = syntaxErrorAt(text) ?? offsetOfPath(text, ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.path ?? [])
  return offset === undefined ? "" : `, line ${lineAt(text, offset)}`
}

/** "line 3, column 7" (1-based) of the first character that is not JSON; undefined for valid JSON. */
export const syntaxErrorPlace = (text: string): string | undefined => {
  const offset = syntaxErrorAt(text)
  if (offset === undefined) return undefined
  const before = text.slice(0, offset)
  return `line ${lineAt(text, offset)}, column ${offset - (before.lastIndexOf("\n") + 1) + 1}`
}
