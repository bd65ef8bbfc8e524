import { describe, expect, it } from "vitest"
import { mcnemarExact, pairedOf } from "../../src/programs/eval/stats.js"

// McNemar's exact test against hand computations, and a large one against exact integer arithmetic.

/** p by another route: the binomial coefficients as exact big integers, divided once at the end. */
const exactP = (b: number, c: number): number => {
  const n = b + c
  let coefficient = 1n
  let sum = 0n
  for (let i = 0; i <= Math.min(b, c); i++) {
    if (i > 0) coefficient = (coefficient * BigInt(n - i + 1)) / BigInt(i)
    sum += coefficient
  }
  const scale = 10n ** 30n
  const ratio = (2n * sum * scale) / 2n ** BigInt(n)
  return Math.min(1, Number(ratio) / 1e30)
}

describe("mcnemarExact", () => {
  it("gives the hand-computed p-values (to 15 decimals)", () => {
    // 2 · (C(10,0) + C(10,1)) / 2^10 = 22/1024
    expect(mcnemarExact(1, 9)).toBeCloseTo(0.021484375, 15)
    expect(mcnemarExact(9, 1)).toBeCloseTo(0.021484375, 15)
    // 2 · C(5,0) / 2^5
    expect(mcnemarExact(0, 5)).toBeCloseTo(0.0625, 15)
    // 2 · (1 + 9 + 36) / 2^9
    expect(mcnemarExact(7, 2)).toBeCloseTo(0.1796875, 15)
    expect(mcnemarExact(0, 0)).toBeCloseTo(1, 15)
    expect(mcnemarExact(3, 3)).toBeCloseTo(1, 15)
  })

  it("stays exact and finite for thousands of discordant pairs", () => {
    for (const [b, c] of [[900, 1000], [1400, 1600], [1000, 1300], [2000, 2100]] as const) {
      const p = mcnemarExact(b, c)
      expect(Number.isFinite(p)).toBe(true)
      expect(p).toBeGreaterThan(0)
      const expected = exactP(b, c)
      expect(Math.abs(p - expected) / expected).toBeLessThan(1e-9)
    }
  })
})

describe("pairedOf", () => {
  it("counts wins, losses and ties on the same items", () => {
    const t = true
    const f = false
    expect(pairedOf([[t, f], [t, f], [f, t], [t, t], [f, f], [f, f]])).toEqual({ wins: 2, losses: 1, ties: 3, p: 1 })
    expect(pairedOf([[t, f], [t, f], [t, f], [t, f], [t, f]])).toEqual({ wins: 5, losses: 0, ties: 0, p: 0.0625 })
  })
})
