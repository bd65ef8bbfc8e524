import { Either, Option, Schema } from "effect"

// The `rank` strategy's arithmetic, pure: reading a judge's ranking out of its answer, and the Borda count.

/** What a judge is asked to end its answer with; `parseRanking` also reads JSON (`{"ranking": [...]}`). */
export const RANKING_LINE = "RANKING:"

const JsonRanking = Schema.parseJson(Schema.Struct({ ranking: Schema.Array(Schema.String) }))
const decodeJsonRanking = Schema.decodeUnknownOption(JsonRanking)

/** `Candidate B`, `**B**`, `[B]`, `b.` → `B`. */
const labelOf = (token: string): string => token.replace(/[*_`"'[\]().:]/g, " ").trim().replace(/^candidate\s+/i, "").trim().toUpperCase()

/** The ranking's tokens: a JSON object's `ranking`, else the last `RANKING:` line (`C > A > B`, or with commas). */
const rankingTokens = (text: string): ReadonlyArray<string> | undefined => {
  const json = text.match(/\{[^{}]*"ranking"[^{}]*\}/g)
  const decoded = json === null ? Option.none() : decodeJsonRanking(json[json.length - 1])
  if (Option.isSome(decoded)) return decoded.value.ranking
  const lines = text.split("\n").filter((line) => /ranking\s*:/i.test(line))
  const last = lines[lines.length - 1]
  if (last === undefined) return undefined
  return last.slice(last.search(/ranking\s*:/i)).replace(/^ranking\s*:/i, "").split(/>|,|;|\bthen\b/i)
}

/**
 * The labels a judge ranked, best first, read leniently: each known label once, in the order given; labels
 * in `own` (the judge's own answers) are left out. Left: why no ranking could be read.
 */
export const parseRanking = (
  text: string,
  labels: ReadonlyArray<string>,
  own: ReadonlyArray<string> = []
): Either.Either<ReadonlyArray<string>, string> => {
  const tokens = rankingTokens(text)
  if (tokens === undefined) return Either.left(`no "${RANKING_LINE}" line or JSON ranking in the answer`)
  const known = new Set(labels)
  const ranked: Array<string> = []
  for (const token of tokens.map(labelOf).filter((t) => t !== "")) {
    if (!known.has(token)) return Either.left(`the ranking names ${JSON.stringify(token.slice(0, 40))}, which is no candidate`)
    if (!ranked.includes(token)) ranked.push(token)
  }
  const counted = ranked.filter((label) => !own.includes(label))
  return counted.length > 0 ? Either.right(counted) : Either.left("the ranking names no other candidate than its own")
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
}

/** How many ballots put `a` above `b`, less how many put `b` above `a` (ballots naming both). */
const headToHead = (ballots: ReadonlyArray<Ballot>, a: string, b: string): number =>
  ballots.reduce((sum, { ranking }) => {
    const [i, j] = [ranking.indexOf(a), ranking.indexOf(b)]
    return i < 0 || j < 0 ? sum : sum + (i < j ? 1 : -1)
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
  for (const { own, ranking } of ballots) {
    const eligible = labels.filter((label) => !own.includes(label)).length
    if (eligible < 2) continue
    ranking.filter((label) => !own.includes(label)).forEach((label, place) => {
      const t = tally.get(label)
      if (t === undefined) return
      t.sum += (eligible - 1 - place) / (eligible - 1)
      t.ballots += 1
      if (place === 0) t.firsts += 1
    })
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
