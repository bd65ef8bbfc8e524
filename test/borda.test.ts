import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { bordaCount, parseRanking } from "../src/programs/strategies/borda.js"

// The rank strategy's arithmetic on fixed inputs: rankings read leniently, and the Borda count.

const labels = ["A", "B", "C", "D"]

describe("parseRanking", () => {
  it("reads the last RANKING line, however the labels are written", () => {
    expect(parseRanking("A is wrong.\nRANKING: C > A > B > D", labels)).toEqual(Either.right(["C", "A", "B", "D"]))
    expect(parseRanking("**Ranking:** Candidate B > [A] > d. > C", labels)).toEqual(Either.right(["B", "A", "D", "C"]))
    expect(parseRanking("RANKING: A > B\nOn reflection:\nRANKING: B, A, C", labels)).toEqual(Either.right(["B", "A", "C"]))
  })

  it("reads a JSON ranking, decoded with its schema", () => {
    expect(parseRanking("My verdict: {\"ranking\": [\"D\", \"Candidate A\"]}", labels)).toEqual(Either.right(["D", "A"]))
  })

  it("leaves out the judge's own answers, and a label said twice counts once", () => {
    expect(parseRanking("RANKING: B > A > B > C", labels, ["A"])).toEqual(Either.right(["B", "C"]))
  })

  it("says why a ranking cannot be read", () => {
    expect(parseRanking("They are all good.", labels)).toEqual(Either.left(`no "RANKING:" line or JSON ranking in the answer`))
    expect(Either.getLeft(parseRanking("RANKING: A > E", labels))).toEqual(
      expect.objectContaining({ value: expect.stringContaining(`names "E"`) })
    )
    expect(Either.isLeft(parseRanking("RANKING: A", labels, ["A"]))).toBe(true)
  })
})

describe("bordaCount", () => {
  it("adds up the counted rankings, self-votes excluded and an unparseable ranking left out", () => {
    // Four judges, each the author of one answer (judge of A wrote A, …); the fourth's ranking could not be
    // read, so it is not among the rankings counted.
    const judged = [
      { own: ["A"], text: "RANKING: A > B > C > D" }, // its own A is dropped: B 2, C 1, D 0
      { own: ["B"], text: "RANKING: A > C > D > B" }, // A 2, C 1, D 0
      { own: ["C"], text: "RANKING: B > A > D" }, // B 2, A 1, D 0
      { own: ["D"], text: "no idea" }
    ]
    const counted = judged.flatMap(({ own, text }) => {
      const parsed = parseRanking(text, labels, own)
      return Either.isRight(parsed) ? [{ ranking: parsed.right, own }] : []
    })
    expect(counted).toHaveLength(3)
    expect(bordaCount(labels, counted)).toEqual([
      { label: "B", points: 4 },
      { label: "A", points: 3 },
      { label: "C", points: 2 },
      { label: "D", points: 0 }
    ])
  })

  it("gives a label a judge left out no points from it, and keeps the labels' order on a tie", () => {
    expect(bordaCount(["A", "B", "C"], [{ ranking: ["C"], own: [] }, { ranking: ["B"], own: [] }])).toEqual([
      { label: "B", points: 2 },
      { label: "C", points: 2 },
      { label: "A", points: 0 }
    ])
    expect(bordaCount(["A", "B"], [])).toEqual([{ label: "A", points: 0 }, { label: "B", points: 0 }])
  })
})
