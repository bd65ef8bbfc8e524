import { Either } from "effect"

// Where a text stops being JSON, as a line and a column: a config file's parse error names the place, never
// the text (`--config /etc/shadow` must not print the file's first characters, as JSON.parse's message does).

/** Whether `JSON.parse` of the text fails before the text's end (not merely because it ends too soon). */
const failsBeforeEnd = (text: string): boolean =>
  Either.match(Either.try(() => JSON.parse(text) as unknown), {
    onRight: () => false,
    onLeft: (error) => {
      const message = error instanceof Error ? error.message : ""
      const at = /at position (\d+)/.exec(message)
      return at !== null ? Number(at[1]) < text.length : !/end of JSON input/.test(message)
    }
  })

/**
 * The 0-based offset of the first character that makes the text invalid JSON: the shortest prefix that fails
 * before its own end ends there. Undefined for valid JSON.
 */
const errorOffset = (text: string): number | undefined => {
  if (!failsBeforeEnd(text)) {
    return Either.isRight(Either.try(() => JSON.parse(text) as unknown)) ? undefined : text.length
  }
  let low = 0 // a prefix of this length does not fail before its end
  let high = text.length // a prefix of this length does
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2)
    if (failsBeforeEnd(text.slice(0, mid))) high = mid
    else low = mid
  }
  return high - 1
}

/** "line 3, column 7" (1-based) of the first character that is not JSON; undefined for valid JSON. */
export const jsonErrorPlace = (text: string): string | undefined => {
  const offset = errorOffset(text)
  if (offset === undefined) return undefined
  const before = text.slice(0, offset)
  const line = before.split("\n").length
  const column = offset - (before.lastIndexOf("\n") + 1) + 1
  return `line ${line}, column ${column}`
}
