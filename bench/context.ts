/**
 * What every measurement shares: where the repository, the built CLI and the scratch directory are, the
 * mode, the figures and details being collected for `latest.json`, and the median of repeated runs.
 */
export interface BenchContext {
  readonly root: string
  /** Scratch directory for run directories, removed when the bench ends. */
  readonly tmp: string
  /**
   * Where the CPU targets' two sides write their runs: a memory filesystem where there is one (the same as `tmp`
   * otherwise), so that what is compared is the two programs' own work, not the disk's (bench/README.md, "The ninth
   * session"). Removed when the bench ends.
   */
  readonly cpuTmp: string
  readonly quick: boolean
  /** The built CLI, `dist/main.js`. */
  readonly cliEntry: string
  readonly figures: Record<string, number>
  readonly details: Record<string, unknown>
  readonly log: (line: string) => void
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Runs `once` that many times in a row; the median of what it measured. */
export const repeat = async (times: number, once: () => Promise<number>): Promise<number> => {
  const values: Array<number> = []
  for (let i = 0; i < times; i++) values.push(await once())
  return median(values)
}
