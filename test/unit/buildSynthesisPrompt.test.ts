import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { buildSynthesisPrompt, fairShares, labelFor } from "../../src/programs/buildSynthesisPrompt.js"
import { itLive } from "../support/itLive.js"

describe("buildSynthesisPrompt", () => {
  it("labels candidates A…Z, then AA, AB…", () => {
    expect([0, 1, 25, 26, 27, 51, 52].map(labelFor)).toEqual(["A", "B", "Z", "AA", "AB", "AZ", "BA"])
  })

  it("shares a budget fairly: short answers keep everything, long ones split the rest", () => {
    expect(fairShares([100, 200], 1000)).toEqual([100, 200])
    expect(fairShares([100, 5000, 5000], 1100)).toEqual([100, 500, 500])
    expect(fairShares([3000, 100, 9000], 2100)).toEqual([1000, 100, 1000])
    expect(fairShares([10, 10], 0)).toEqual([0, 0])
  })

  itLive.effect("cuts long candidates to the budget with a marker, and records what was cut", () =>
    Effect.gen(function*() {
      const long = "x".repeat(50_000)
      const built = yield* buildSynthesisPrompt("the prompt", [
        { model: "m/short", content: "short answer" },
        { model: "m/long", content: long }
      ], 20_000)
      const user = built.messages[1]!.content
      expect(user).toContain("short answer")
      expect(user).toMatch(/\[… \d+ characters cut here to fit the synthesizer's context budget …\]/)
      expect(user.length).toBeLessThan(20_000)
      expect(built.truncated).toHaveLength(1)
      expect(built.truncated[0]!.model).toBe("m/long")
      expect(built.truncated[0]!.cutChars).toBeGreaterThan(30_000)
      expect(built.messages[0]!.role).toBe("system")
    }))

  itLive.effect("shuffles the order the synthesizer sees", () =>
    Effect.gen(function*() {
      const candidates = Array.from({ length: 6 }, (_, i) => ({ model: `m/${i}`, content: `answer ${i}` }))
      const orders = new Set<string>()
      for (let i = 0; i < 20; i++) {
        const built = yield* buildSynthesisPrompt("p", candidates, 100_000)
        orders.add(built.labels.map((l) => l.model).join(","))
      }
      expect(orders.size).toBeGreaterThan(1)
    }))
})
