import { Option, Redacted } from "effect"
import { stripControl } from "../domain/text.js"

const MASK = "<redacted>"

/**
 * The last line of defence for what the server sends its clients: every result, every notification and
 * every log line goes through this. The API key is masked (a key echoed back by a provider, in an error
 * body say, even if a layer below let it through), and control and bidi characters are stripped from
 * every string (a provider's answer must not drive a terminal or read other than it is; the run's files
 * keep it raw). Keys shorter than 8 characters are not searched for (they would mask ordinary words).
 */
export const makeRedactor = (apiKey: Option.Option<Redacted.Redacted<string>>) => {
  const secret = Option.getOrUndefined(Option.filter(Option.map(apiKey, Redacted.value), (key) => key.length >= 8))
  const text = (value: string): string => stripControl(secret === undefined ? value : value.replaceAll(secret, MASK))
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
    /** The same value with the key masked and control characters stripped in every string (same shape, so the same type). */
    value: <A>(value: A): A => deep(value) as A
  }
}

export type Redactor = ReturnType<typeof makeRedactor>
