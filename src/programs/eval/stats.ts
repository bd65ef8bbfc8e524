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
