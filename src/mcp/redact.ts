import { Option, Redacted } from "effect"

const MASK = "<redacted>"

/**
 * The last line of defence for the contract's "the API key never appears in any MCP output": every result
 * and every log line the server sends goes through this, so a key echoed back by a provider (in an error
 * body, say) is masked even if a layer below let it through. Keys shorter than 8 characters are not
 * searched for (they would mask ordinary words).
 */
export const makeRedactor = (apiKey: Option.Option<Redacted.Redacted<string>>) => {
  const secret = Option.getOrUndefined(Option.filter(Option.map(apiKey, Redacted.value), (key) => key.length >= 8))
  const text = (value: string): string => (secret === undefined ? value : value.replaceAll(secret, MASK))
  const deep = (value: unknown): unknown =>
    typeof value === "string"
      ? text(value)
      : Array.isArray(value)
      ? value.map(deep)
      : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, deep(inner)]))
      : value
  return {
    text,
    /** The same value with the key masked in every string in it (same shape, so the same type). */
    value: <A>(value: A): A => (secret === undefined ? value : (deep(value) as A))
  }
}

export type Redactor = ReturnType<typeof makeRedactor>
