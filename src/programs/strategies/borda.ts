import { Either, Option, Schema } from "effect"

// The `rank` strategy's arithmetic, pure: reading a judge's ranking out of its answer, and the Borda count.

/** What a judge is asked to end its answer with; `parseRanking` also reads JSON (`{"ranking": [...]}`). */
export const RANKING_LINE = "RANKING:"

/** A label in a JSON ranking: itself, or an object naming it (`{"label": "B", "reason": …}`). */
const JsonLabel = Schema.Union(
  Schema.String,
  Schema.transform(Schema.Struct({ label: Schema.String }), Schema.String, { decode: (o) => o.label, encode: (label) => ({ label }) }),
  Schema.transform(Schema.Struct({ candidate: Schema.String }), Schema.String, {
    decode: (o) => o.candidate,
    encode: (candidate) => ({ candidate })
  })
)
/** A JSON ranking: labels best first, an inner array a tie; or the ranking written as a line (`"B > A"`). */
const JsonRanking = Schema.parseJson(Schema.Union(Schema.Array(Schema.Union(JsonLabel, Schema.Array(JsonLabel))), Schema.String))
const decodeJsonRanking = Schema.decodeUnknownOption(JsonRanking)

/** `Candidate B`, `**B**`, `[B]`, `b.`, `Answer B (weakest)` → `B`. */
const labelOf = (token: string): string =>
  token.replace(/\([^)]*\)/g, " ").replace(/[*_`"'[\]().:#]/g, " ").trim().replace(/^(candidate|answer|response)\s+/i, "")
    .trim().toUpperCase()

/** Tiers, best first; labels in one tier are tied (`C = A`). */
type Tiers = ReadonlyArray<ReadonlyArray<string>>

/** A ranking line's text (`C > A = B, D`, `B then A`) as tiers; a parenthesised remark (`(B is weakest)`) is dropped. */
const tiersOfLine = (line: string): Tiers => line.replace(/\([^)]*\)/g, " ").split(/>+|≻|,|;|\bthen\b/i).map((tier) => tier.split(/=/))

/** The first label a Markdown list item names: `1. **Candidate B** — right`, `- C: …`. */
const listLabel = (item: string): string =>
  labelOf(item.replace(/^(\*\*|__)?\s*(candidate|answer|response)?\s*([A-Za-z]{1,2})\b.*$/i, "$3"))

/** The tiers of a JSON `"ranking"` value anywhere in the text, however deeply nested (the last one wins). */
const jsonTiers = (text: string): Tiers | undefined => {
  const found = [...text.matchAll(/"ranking"\s*:\s*(\[(?:[^[\]]|\[[^[\]]*\])*\]|"[^"]*")/gi)]
  const decoded = found.length === 0 ? Option.none() : decodeJsonRanking(found[found.length - 1]![1])
  if (Option.isNone(decoded)) return undefined
  const value = decoded.value
  return typeof value === "string" ? tiersOfLine(value) : value.map((tier) => (typeof tier === "string" ? [tier] : tier))
}

/** A line that introduces the ranking: `RANKING:`, `**Final ranking (best first):**`, `Ranking: B > A`. */
const RANKING_HEAD = /\branking\b[^:\n]{0,40}:/i

/** The tiers a ranking line gives, or the Markdown list after it when the line holds no label. */
const lineTiers = (lines: ReadonlyArray<string>, at: number): Tiers => {
  const rest = lines[at]!.slice(lines[at]!.search(RANKING_HEAD)).replace(RANKING_HEAD, "")
  if (labelOf(rest) !== "") return tiersOfLine(rest)
  const items = lines.slice(at + 1).filter((line) => line.trim() !== "")
  const end = items.findIndex((line) => !/^\s*(\d+[.)]|[-*+])\s+/.test(line))
  const list = end < 0 ? items : items.slice(0, end)
  return list.map((item) => [listLabel(item.replace(/^\s*(\d+[.)]|[-*+])\s+/, ""))])
}

/**
 * The rankings a reply may hold, most trusted first: a JSON `"ranking"`, then each ranking line from the last
 * up (`C > A = B`, or with commas; else the Markdown list that follows it).
 */
const rankingCandidates = (text: string): ReadonlyArray<Tiers> => {
  const lines = text.split("\n")
  const heads = lines.flatMap((line, at) => (RANKING_HEAD.test(line) ? [at] : [])).reverse()
  const json = jsonTiers(text)
  return [...(json !== undefined ? [json] : []), ...heads.map((at) => lineTiers(lines, at))]
}

/** A judge's ranking, best first, its own answers left out; `tied` lists the groups it ranked level. */
export interface Ranking {
  readonly ranking: ReadonlyArray<string>
  readonly tied: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * The labels a judge ranked, best first, read leniently: each known label once, in the order given; labels
 * in `own` (the judge's own answers) are left out. Left: why no ranking could be read.
 */
export const parseRanking = (
  text: string,
  labels: ReadonlyArray<string>,
  own: ReadonlyArray<string> = []
): Either.Either<Ranking, string> => {
  const found = rankingCandidates(text)
  if (found.length === 0) return Either.left(`no "${RANKING_LINE}" line or JSON ranking in the answer`)
  // A later line that merely mentions a ranking ("Note on ranking: …") does not hide the ranking itself.
  const read = found.map((tiers) => readTiers(tiers, labels, own))
  return read.find(Either.isRight) ?? read[0]!
}

/** Tiers of written labels as known labels, each once, `own` left out; Left: why they are no ranking. */
const readTiers = (tiers: Tiers, labels: ReadonlyArray<string>, own: ReadonlyArray<string>): Either.Either<Ranking, string> => {
  const known = new Set(labels)
  const seen = new Set<string>()
  const counted: Array<ReadonlyArray<string>> = []
  for (const tier of tiers) {
    const kept: Array<string> = []
    for (const label of tier.map(labelOf).filter((t) => t !== "")) {
      if (!known.has(label)) return Either.left(`the ranking names ${JSON.stringify(label.slice(0, 40))}, which is no candidate`)
      if (!seen.has(label) && !own.includes(label)) kept.push(label)
      seen.add(label)
    }
    if (kept.length > 0) counted.push(kept)
  }
  return counted.length > 0
    ? Either.right({ ranking: counted.flat(), tied: counted.filter((tier) => tier.length > 1) })
    : Either.left("the ranking names no other candidate than its own")
}

export interface BordaScore {
  readonly label: string
  /** The mean, over the ballots this label could appear on, of its place on each: 1 for first, 0 for last. */
  readonly points: number
  /** The ballots that counted for it: counted rankings that named it and were not by its own author. */
  readonly ballots: number
  /** How many of those ranked it first. */
  readonly firsts: number
}

export interface Ballot {
  readonly ranking: ReadonlyArray<string>
  readonly own: ReadonlyArray<string>
  /** Groups of labels ranked level (`C = A`): they share their places' mean. */
  readonly tied?: ReadonlyArray<ReadonlyArray<string>>
}

/** Where a ballot puts a label: its place, the mean of its tie group's places if it is tied. */
const placeOn = (ballot: Ballot, label: string): number => {
  const group = ballot.tied?.find((g) => g.includes(label)) ?? [label]
  const places = group.map((l) => ballot.ranking.indexOf(l)).filter((i) => i >= 0)
  return places.length === 0 ? -1 : places.reduce((sum, i) => sum + i, 0) / places.length
}

/** How many ballots put `a` above `b`, less how many put `b` above `a` (ballots naming both; a tie is neither). */
const headToHead = (ballots: ReadonlyArray<Ballot>, a: string, b: string): number =>
  ballots.reduce((sum, ballot) => {
    const [i, j] = [placeOn(ballot, a), placeOn(ballot, b)]
    return i < 0 || j < 0 ? sum : sum + Math.sign(j - i)
  }, 0)

/**
 * The Borda count, normalised per eligible ballot. On a ballot, of the `m` labels its judge may rank (all but
 * its own), the first scores 1, the last 0, evenly between (`(m - 1 - place) / (m - 1)`); a label's score is
 * the mean over the ballots that named it. So a failed judge, a judge's own answer it may not rank, or a
 * ballot that leaves a label out, never counts against that label; a ballot with one rankable label says
 * nothing and is skipped. Best first. Ties (the synthesizer has not read the answers yet) go to more first
 * places, then to the label more ballots preferred head to head, and only then to the labels' order.
 */
export const bordaCount = (labels: ReadonlyArray<string>, ballots: ReadonlyArray<Ballot>): ReadonlyArray<BordaScore> => {
  const tally = new Map(labels.map((label) => [label, { sum: 0, ballots: 0, firsts: 0 }]))
  for (const ballot of ballots) {
    const eligible = labels.filter((label) => !ballot.own.includes(label)).length
    if (eligible < 2) continue
    const mine = { ...ballot, ranking: ballot.ranking.filter((label) => !ballot.own.includes(label)) }
    for (const label of mine.ranking) {
      const t = tally.get(label)
      if (t === undefined) continue
      const place = placeOn(mine, label)
      t.sum += (eligible - 1 - place) / (eligible - 1)
      t.ballots += 1
      if (place < 1 || mine.tied?.some((g) => g.includes(label) && g.includes(mine.ranking[0]!))) t.firsts += 1
    }
  }
  const scores = labels.map((label, order) => {
    const t = tally.get(label) ?? { sum: 0, ballots: 0, firsts: 0 }
    return { label, order, ballots: t.ballots, firsts: t.firsts, mean: t.ballots === 0 ? 0 : t.sum / t.ballots }
  })
  return scores
    .sort((a, b) =>
      (Math.abs(b.mean - a.mean) > 1e-9 ? b.mean - a.mean : 0) || b.firsts - a.firsts ||
      headToHead(ballots, b.label, a.label) || a.order - b.order
    )
    .map(({ ballots, firsts, label, mean }) => ({ label, points: Math.round(mean * 1000) / 1000, ballots, firsts }))
}
