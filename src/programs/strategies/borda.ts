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
  readonly points: number
}

/**
 * The Borda count: in a ranking of the `m` labels a judge may rank (all but its own), the first gets `m - 1`
 * points, the next `m - 2`, …; a label it left out gets none from it. Best first; ties keep `labels`' order.
 */
export const bordaCount = (
  labels: ReadonlyArray<string>,
  rankings: ReadonlyArray<{ readonly ranking: ReadonlyArray<string>; readonly own: ReadonlyArray<string> }>
): ReadonlyArray<BordaScore> => {
  const points = new Map(labels.map((label) => [label, 0]))
  for (const { own, ranking } of rankings) {
    const eligible = labels.filter((label) => !own.includes(label)).length
    ranking.forEach((label, position) => {
      const sofar = points.get(label)
      if (sofar !== undefined && !own.includes(label)) points.set(label, sofar + eligible - 1 - position)
    })
  }
  return labels
    .map((label, order) => ({ label, points: points.get(label) ?? 0, order }))
    .sort((a, b) => b.points - a.points || a.order - b.order)
    .map(({ label, points }) => ({ label, points }))
}
