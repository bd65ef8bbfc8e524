// Which characters an HTTP header value can carry: a settings kind (`X-Title`) and the key's check both ask.
// Its own module, below the table: the kinds the table is made of import it.

/** `U+2026`: a code point as Unicode writes it. */
const codePointName = (char: string): string => `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`

/**
 * The first character of `value` outside `allowed` (1-based, counted in characters as a person counts them) and
 * its code point, never the value itself: a key must not be printed.
 */
const firstOutside = (value: string, allowed: RegExp): { readonly position: number; readonly codePoint: string } | undefined => {
  let position = 0
  for (const char of value) {
    position++
    if (!allowed.test(char)) return { position, codePoint: codePointName(char) }
  }
  return undefined
}

/** What an attribution header (`X-Title`) may hold: printable ASCII, spaces included. */
export const HEADER_CHARACTER = /^[\x20-\x7E]$/

/** The place and code point of a character a header value cannot carry, for a message. */
export const headerCharacterProblem = (value: string, allowed: RegExp = HEADER_CHARACTER): string | undefined => {
  const bad = firstOutside(value, allowed)
  return bad === undefined
    ? undefined
    : `has a character that cannot go in an HTTP header at position ${bad.position} (${bad.codePoint})`
}
