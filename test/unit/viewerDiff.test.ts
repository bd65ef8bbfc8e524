import { describe, expect, it } from "vitest"
import { piecesOf, wordsOf } from "../../src/viewer/page/diff.js"

// The viewer's highlight of where a candidate differs from the final answer: the words the final answer lacks.

describe("piecesOf", () => {
  it("marks the words the final answer does not use, ignoring case, and keeps the text whole", () => {
    const text = "The answer is 4 APPLES, not pears."
    const { pieces, share } = piecesOf(text, wordsOf("the answer is 4 apples"))
    expect(pieces.map((p) => p.text).join("")).toBe(text)
    expect(pieces.filter((p) => p.added).map((p) => p.text.trim())).toEqual(["not pears"])
    expect(share).toBeCloseTo(2 / 7)
  })

  it("marks nothing in a text the final answer holds, and says 0 for a text without words", () => {
    expect(piecesOf("It is 4.", wordsOf("it is 4")).pieces).toEqual([{ text: "It is 4.", added: false }])
    expect(piecesOf("…", wordsOf("x")).share).toBe(0)
  })
})
