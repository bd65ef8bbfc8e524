import { Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { parseRanking } from "../../src/programs/strategies/borda.js"

// The ranking parser against a fixture of judge replies written the ways models answer: a remark after the
// ranking line, "Ranking (best first):", ties (`C = A`), JSON nested in an object or a code block, Markdown
// lists, markup around the labels. Each line holds the labels shown, the judge's own labels, its reply, and the
// ranking (best first) and tied groups to be read, or a fragment of the reason none can be. It must agree entirely.

const Case = Schema.parseJson(Schema.Struct({
  labels: Schema.Array(Schema.String),
  own: Schema.Array(Schema.String),
  reply: Schema.String,
  ranking: Schema.optional(Schema.Array(Schema.String)),
  tied: Schema.optional(Schema.Array(Schema.Array(Schema.String))),
  error: Schema.optional(Schema.String)
}))

const cases = fs.readFileSync(path.join(__dirname, "..", "fixtures", "judge-replies.jsonl"), "utf8")
  .split("\n").filter((line) => line.trim() !== "").map((line) => Schema.decodeUnknownSync(Case)(line))

describe("the judge replies' fixture", () => {
  it("holds at least 30 replies, some that cannot be read", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30)
    expect(cases.some((c) => c.error !== undefined)).toBe(true)
  })

  it("reads every reply's ranking, ties and all, or says why not, as the fixture says", () => {
    const disagreements = cases.flatMap((c, i) => {
      const parsed = parseRanking(c.reply, c.labels, c.own)
      const agrees = Either.match(parsed, {
        onLeft: (why) => c.error !== undefined && why.includes(c.error),
        onRight: (read) => c.error === undefined && JSON.stringify(read) === JSON.stringify({ ranking: c.ranking, tied: c.tied ?? [] })
      })
      return agrees ? [] : [{ line: i + 1, reply: c.reply, read: Either.isLeft(parsed) ? parsed.left : parsed.right }]
    })
    expect(disagreements).toEqual([])
  })
})
