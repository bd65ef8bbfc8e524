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
