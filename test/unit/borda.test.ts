import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { bordaCount, parseRanking } from "../../src/programs/strategies/borda.js"

// The rank strategy's arithmetic on fixed inputs: rankings read leniently, and the Borda count.

const labels = ["A", "B", "C", "D"]

/** The labels a judge ranked, best first, ties aside. */
const flat = (...args: Parameters<typeof parseRanking>) => Either.map(parseRanking(...args), (r) => r.ranking)

describe("parseRanking", () => {
  it("reads the last RANKING line, however the labels are written", () => {
    expect(flat("A is wrong.\nRANKING: C > A > B > D", labels)).toEqual(Either.right(["C", "A", "B", "D"]))
    expect(flat("**Ranking:** Candidate B > [A] > d. > C", labels)).toEqual(Either.right(["B", "A", "D", "C"]))
    expect(flat("RANKING: A > B\nOn reflection:\nRANKING: B, A, C", labels)).toEqual(Either.right(["B", "A", "C"]))
  })

  it("reads a JSON ranking, decoded with its schema", () => {
    expect(flat("My verdict: {\"ranking\": [\"D\", \"Candidate A\"]}", labels)).toEqual(Either.right(["D", "A"]))
  })

  it("leaves out the judge's own answers, and a label said twice counts once", () => {
    expect(flat("RANKING: B > A > B > C", labels, ["A"])).toEqual(Either.right(["B", "C"]))
  })

  it("says why a ranking cannot be read", () => {
    expect(flat("They are all good.", labels)).toEqual(Either.left(`no "RANKING:" line or JSON ranking in the answer`))
    expect(Either.getLeft(parseRanking("RANKING: A > E", labels))).toEqual(
      expect.objectContaining({ value: expect.stringContaining(`names "E"`) })
    )
    expect(Either.isLeft(parseRanking("RANKING: A", labels, ["A"]))).toBe(true)
  })
})

const ballotsOf = (judged: ReadonlyArray<{ readonly own: ReadonlyArray<string>; readonly text: string }>) =>
  judged.flatMap(({ own, text }) => {
    const parsed = parseRanking(text, labels, own)
    return Either.isRight(parsed) ? [{ ...parsed.right, own }] : []
  })
const order = (scores: ReadonlyArray<{ readonly label: string }>) => scores.map((s) => s.label)

describe("bordaCount", () => {
  it("averages each label over the ballots it could appear on: self-votes and an unreadable ranking left out", () => {
    // Four judges, each the author of one answer (judge of A wrote A, …); the fourth's ranking could not be read.
    const counted = ballotsOf([
      { own: ["A"], text: "RANKING: A > B > C > D" }, // B 1, C ½, D 0
      { own: ["B"], text: "RANKING: A > C > D > B" }, // A 1, C ½, D 0
      { own: ["C"], text: "RANKING: B > A > D" }, // B 1, A ½, D 0
      { own: ["D"], text: "no idea" }
    ])
    expect(counted).toHaveLength(3)
    expect(bordaCount(labels, counted)).toEqual([
      { label: "B", points: 1, ballots: 2, firsts: 2 },
      { label: "A", points: 0.75, ballots: 2, firsts: 1 },
      { label: "C", points: 0.5, ballots: 2, firsts: 0 },
      { label: "D", points: 0, ballots: 3, firsts: 0 }
    ])
  })

  it("four candidates, one failed judge, every judge prefers B to A: B wins (a raw count tied them, A won on label order)", () => {
    // A's author failed, so A lost no ballot; B's author may not rank B. Raw Borda: A 2+1+1 = 4, B 2+2 = 4.
    const counted = ballotsOf([
      { own: ["B"], text: "RANKING: B > A > C > D" },
      { own: ["C"], text: "RANKING: B > A > D > C" },
      { own: ["D"], text: "RANKING: B > A > C > D" }
    ])
    const scores = bordaCount(labels, counted)
    expect(order(scores)).toEqual(["B", "A", "C", "D"])
    expect(scores[0]).toEqual({ label: "B", points: 1, ballots: 2, firsts: 2 })
    expect(scores[1]!.points).toBeCloseTo(2 / 3, 3)
  })

  it("a candidate judge and an outside judge both rate A best: A wins outright, not on a tie", () => {
    // The candidate judge wrote A and may not rank it, so a raw count gave A 2 and B 1 + 1 = 2.
    const scores = bordaCount(["A", "B", "C"], [
      { ranking: ["B", "C"], own: ["A"] },
      { ranking: ["A", "B", "C"], own: [] }
    ])
    expect(order(scores)).toEqual(["A", "B", "C"])
    expect(scores[0]!.points).toBeGreaterThan(scores[1]!.points)
    expect(scores.map((s) => s.points)).toEqual([1, 0.75, 0])
  })

  it("a ballot that leaves a label out does not count against it", () => {
    // C is named only by the first judge, first; B is first on one ballot and second on the other.
    const scores = bordaCount(["A", "B", "C"], [{ ranking: ["C"], own: [] }, { ranking: ["B", "A", "C"], own: [] }])
    expect(scores.map((s) => [s.label, s.points, s.ballots])).toEqual([["B", 1, 1], ["C", 0.5, 2], ["A", 0.5, 1]])
  })

  it("gives labels a judge ranked level (`C = A`) the mean of their places, and neither beats the other head to head", () => {
    const parsed = parseRanking("RANKING: B > C = A > D", labels)
    expect(parsed).toEqual(Either.right({ ranking: ["B", "C", "A", "D"], tied: [["C", "A"]] }))
    const scores = bordaCount(labels, Either.isRight(parsed) ? [{ ...parsed.right, own: [] }] : [])
    // Places 1 and 2 of 0..3 score 2/3 and 1/3: both get ½; A then wins on the labels' order alone.
    expect(scores.map((s) => [s.label, s.points])).toEqual([["B", 1], ["A", 0.5], ["C", 0.5], ["D", 0]])
    // Tied for first, both count a first place.
    expect(bordaCount(labels, [{ ranking: ["C", "A", "B", "D"], tied: [["C", "A"]], own: [] }]).map((s) => s.firsts))
      .toEqual([1, 1, 0, 0])
  })

  it("breaks a tie by first places, then head to head, and only then by the labels' order", () => {
    // A and B both average ½ (A ½ and ½, B 1 and 0); B is first once, A never.
    expect(order(bordaCount(["A", "B", "C"], [
      { ranking: ["B", "A", "C"], own: [] },
      { ranking: ["C", "A", "B"], own: [] },
      { ranking: ["C"], own: [] }
    ]))).toEqual(["C", "B", "A"])
    // A and B tie on score (5/9) and first places (one each); two of three ballots put B above A.
    expect(order(bordaCount(labels, [
      { ranking: ["A", "C", "B", "D"], own: [] },
      { ranking: ["B", "A", "C", "D"], own: [] },
      { ranking: ["C", "D", "B", "A"], own: [] }
    ]))).toEqual(["C", "B", "A", "D"])
    expect(bordaCount(["A", "B"], [])).toEqual([{ label: "A", points: 0, ballots: 0, firsts: 0 }, {
      label: "B",
      points: 0,
      ballots: 0,
      firsts: 0
    }])
  })
})
