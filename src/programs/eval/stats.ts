// The figures of an accuracy: a proportion with its 95 % Wilson score interval (sound at small n and near 0
// or 1, where the normal approximation is not).

const Z95 = 1.959963984540054

export interface Accuracy {
  readonly correct: number
  readonly n: number
  /** correct / n, 0 when n is 0. */
  readonly accuracy: number
  /** The 95 % Wilson interval [low, high]. */
  readonly interval: readonly [number, number]
}

export const wilson = (correct: number, n: number, z = Z95): readonly [number, number] => {
  if (n === 0) return [0, 1]
  const p = correct / n
  const z2 = z * z
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n)
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))
  return [Math.max(0, centre - half), Math.min(1, centre + half)]
}

export const accuracyOf = (correct: number, n: number): Accuracy => ({
  correct,
  n,
  accuracy: n === 0 ? 0 : correct / n,
  interval: wilson(correct, n)
})

export const mean = (values: ReadonlyArray<number>): number | undefined =>
  values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length

export const median = (values: ReadonlyArray<number>): number | undefined => {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * The exact two-sided McNemar test: a binomial test of `b` against `c`, the discordant pairs (one side right,
 * the other wrong), under p = ½. p = min(1, 2 · Σ_{i ≤ min(b, c)} C(b+c, i) / 2^(b+c)), each term built from
 * the previous one in log space, so that thousands of pairs neither overflow nor lose the small terms.
 */
export const mcnemarExact = (b: number, c: number): number => {
  const n = b + c
  const k = Math.min(b, c)
  let logTerm = -n * Math.LN2 // log(C(n, 0) / 2^n)
  let sum = Math.exp(logTerm)
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i)
    sum += Math.exp(logTerm)
  }
  return Math.min(1, 2 * sum)
}

/** One system against another on the same items: wins (only the first right), losses, ties, and McNemar's p. */
export interface Paired {
  readonly wins: number
  readonly losses: number
  readonly ties: number
  readonly p: number
}

/** `pairs`: per item, whether the system and the baseline were right. */
export const pairedOf = (pairs: ReadonlyArray<readonly [boolean, boolean]>): Paired => {
  const wins = pairs.filter(([mine, theirs]) => mine && !theirs).length
  const losses = pairs.filter(([mine, theirs]) => !mine && theirs).length
  return { wins, losses, ties: pairs.length - wins - losses, p: mcnemarExact(wins, losses) }
}
