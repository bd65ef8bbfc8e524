import { Option, Redacted } from "effect"

/** Fewer characters than this cannot be told apart from ordinary text: such a key is not searched for. */
const SHORTEST_KEY = 8
/** How much of the key's start marks a quotation of it (a provider that echoes `sk-or-v1-abcd…`). */
const PREFIX_CHARS = 16

export type Redact = (text: string) => string

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Removes the API key from provider text, applied to string fields after parsing (never to raw wire
 * text, where a short key would corrupt the JSON). It catches the whole key, its leading part with
 * whatever follows it in the same token, and either of them in another letter case.
 */
export const makeRedact = (apiKey: Option.Option<Redacted.Redacted>): Redact => {
  const key = Option.match(apiKey, { onNone: () => "", onSome: Redacted.value })
  if (key.length < SHORTEST_KEY) return (text) => text
  const head = key.slice(0, Math.min(key.length, PREFIX_CHARS))
  const pattern = new RegExp(`${escape(head)}[\\w.~+/=-]*`, "gi")
  const probe = new RegExp(escape(head), "i")
  return (text) => (text.length >= head.length && probe.test(text) ? text.replace(pattern, "<redacted>") : text)
}

/** Key redaction for text that arrives in pieces: what it lets through, piece by piece, and at the end. */
export interface StreamRedact {
  readonly push: (text: string) => string
  readonly end: () => string
}

const TOKEN_START = /^[\w.~+/=-]*/

/**
 * {@link makeRedact} over text cut anywhere (a streamed answer's reads): the end of a piece that may be the
 * start of the key waits for the next piece, and the rest of a key that a piece ended in is dropped from
 * the next. Without a key to look for, pieces pass as they are.
 */
export const makeStreamRedact = (apiKey: Option.Option<Redacted.Redacted>): StreamRedact => {
  const key = Option.match(apiKey, { onNone: () => "", onSome: Redacted.value })
  if (key.length < SHORTEST_KEY) return { push: (text) => text, end: () => "" }
  const redact = makeRedact(apiKey)
  const head = key.slice(0, Math.min(key.length, PREFIX_CHARS)).toLowerCase()
  const endsInKey = new RegExp(`${escape(head)}[\\w.~+/=-]*$`, "i")
  let held = ""
  let inKey = false
  /** How many characters at the end of `text` could be the key's first ones. */
  const keyStartAtEnd = (text: string): number => {
    const lower = text.slice(-(head.length - 1)).toLowerCase()
    for (let i = lower.indexOf(head[0] ?? ""); i !== -1; i = lower.indexOf(head[0] ?? "", i + 1)) {
      if (head.startsWith(lower.slice(i))) return lower.length - i
    }
    return 0
  }
  return {
    push: (piece) => {
      let text = held + piece
      held = ""
      if (inKey) {
        const rest = TOKEN_START.exec(text)?.[0].length ?? 0
        text = text.slice(rest)
        if (text === "") return ""
        inKey = false
      }
      inKey = endsInKey.test(text)
      const out = redact(text)
      const keep = inKey ? 0 : keyStartAtEnd(out)
      if (keep === 0) return out
      held = out.slice(-keep)
      return out.slice(0, -keep)
    },
    end: () => {
      const rest = held
      held = ""
      return rest
    }
  }
}
