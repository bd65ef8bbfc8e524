import { Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { makeRedact, makeStreamRedact } from "../../src/domain/redact.js"

const KEY = "sk-or-v1-SECRET-5f3c9a1e7d2b4c6a8e0f1a2b3c4d5e6f"
const key = Option.some(Redacted.make(KEY))

/** `text` cut at `cuts`, pushed piece by piece through one stream redactor: everything it lets through. */
const throughStream = (text: string, cuts: ReadonlyArray<number>): string => {
  const redact = makeStreamRedact(key)
  const bounds = [0, ...cuts, text.length]
  let out = ""
  for (let i = 0; i + 1 < bounds.length; i++) out += redact.push(text.slice(bounds[i], bounds[i + 1]))
  return out + redact.end()
}

describe("makeStreamRedact: a streamed answer's text, read by read", () => {
  const answer = `before ${KEY} after, and ${KEY.toUpperCase().slice(0, 20)}… again`

  it("removes the key wherever the reads cut it, as the whole text's redaction does", () => {
    const whole = makeRedact(key)(answer)
    for (let cut = 1; cut < answer.length; cut++) {
      const out = throughStream(answer, [cut])
      expect(out.toLowerCase(), `cut at ${cut}`).not.toContain(KEY.slice(0, 16).toLowerCase())
      expect(out, `cut at ${cut}`).not.toContain(KEY.slice(-16))
      expect(out, `cut at ${cut}`).toBe(whole)
    }
  })

  it("removes it when it comes a character per read", () => {
    const cuts = Array.from({ length: answer.length - 1 }, (_, i) => i + 1)
    expect(throughStream(answer, cuts)).toBe(makeRedact(key)(answer))
  })

  it("lets ordinary text through unchanged, holding back only what could start the key", () => {
    const text = "so sk-or is not the key, nor is sk"
    const redact = makeStreamRedact(key)
    expect(redact.push("so sk-or")).toBe("so ")
    expect(redact.push(" is not the key, nor is sk")).toBe("sk-or is not the key, nor is ")
    expect(redact.end()).toBe("sk")
    expect(throughStream(text, [5, 12, 20])).toBe(text)
  })

  it("passes pieces as they are without a key to look for", () => {
    const redact = makeStreamRedact(Option.none())
    expect(redact.push("sk-or-v1")).toBe("sk-or-v1")
    expect(redact.end()).toBe("")
  })
})
