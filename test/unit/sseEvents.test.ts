import { describe, expect, it } from "vitest"
import { makeSseDecoder } from "../../src/services/sseEvents.js"

const bytes = (text: string) => new TextEncoder().encode(text)

/** Feeds `pieces` one by one and returns every event's data, in order. */
const decodeAll = (pieces: ReadonlyArray<Uint8Array>, maxEventChars = 1_000_000) => {
  const decoder = makeSseDecoder({ maxEventChars })
  const out: Array<string> = []
  for (const piece of pieces) {
    const events = decoder.push(piece)
    if (events === undefined) return "too large"
    out.push(...events.map((e) => e.data))
  }
  const rest = decoder.end()
  if (rest === undefined) return "too large"
  return [...out, ...rest.map((e) => e.data)]
}

describe("makeSseDecoder", () => {
  it("decodes many events in one piece, and pieces cut anywhere (mid-line, mid-character, CRLF)", () => {
    const text = ": OPENROUTER PROCESSING\n\n" +
      Array.from({ length: 200 }, (_, i) => `data: {"n":${i},"t":"é✓"}\r\n\r\n`).join("") +
      "event: message\nid: 7\ndata: two\ndata: lines\n\n" +
      "data: [DONE]\n\n"
    const expected = [...Array.from({ length: 200 }, (_, i) => `{"n":${i},"t":"é✓"}`), "two\nlines", "[DONE]"]
    expect(decodeAll([bytes(text)])).toEqual(expected)
    const all = bytes(text)
    for (const size of [1, 2, 3, 7, 64, 1000]) {
      const pieces: Array<Uint8Array> = []
      for (let i = 0; i < all.length; i += size) pieces.push(all.subarray(i, i + size))
      expect(decodeAll(pieces), `pieces of ${size} bytes`).toEqual(expected)
    }
  })

  it("dispatches nothing for an event that never ends, and refuses one past the size limit", () => {
    expect(decodeAll([bytes("data: complete\n\ndata: cut off")])).toEqual(["complete"])
    expect(decodeAll([bytes(`data: ${"x".repeat(500)}\n\n`)], 100)).toBe("too large")
    expect(decodeAll([bytes(`data: ${"x".repeat(500)}`)], 100)).toBe("too large")
  })
})
