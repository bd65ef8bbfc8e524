import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { costOf, describeCall, formatBudget, formatCount, formatSeconds, formatUsd, summaryLine } from "../../src/domain/format.js"
import type { Manifest } from "../../src/domain/manifest.js"

const manifest = (usage: Manifest["usage"]): Manifest => ({
  id: "r1",
  status: "partial",
  createdAt: "2026-11-23T12:00:00.000Z",
  finishedAt: "2026-11-23T12:00:04.800Z",
  durationMs: 4800,
  prompt: { chars: 2, sha256: "0".repeat(64) },
  settings: {
    models: ["a/one", "a/two", "a/three"],
    synthesizer: "a/synth",
    concurrency: 5,
    timeoutMs: 240_000,
    retries: 3,
    temperature: 0.7,
    baseUrl: "http://127.0.0.1:9/api/v1",
    fallbackSynthesizers: [],
    stream: false
  },
  candidates: [
    { model: "a/one", status: "ok", attempts: 1 },
    { model: "a/two", status: "ok", attempts: 1 },
    { model: "a/three", status: "error", attempts: 4 }
  ],
  usage
})

describe("format", () => {
  it("writes counts as Intl.NumberFormat(\"en-US\") does, without it", () => {
    const intl = new Intl.NumberFormat("en-US")
    const values = [0, -0, 1, 12, 123, 1234, 12_345, 123_456, 1_234_567, 1e9, 2 ** 53, 1e20, 1.5, 1234.5678, 0.0004, 0.0005, -0.0001]
    for (const n of [...values, -1234.5, 999.9995, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(formatCount(n), String(n)).toBe(intl.format(n))
    }
  })

  it("says durations, dollars and budgets one way", () => {
    expect(formatSeconds(41_249)).toBe("41.2 s")
    expect(formatUsd(0.0123)).toBe("$0.0123")
    expect(formatBudget(1.5)).toBe("$1.50")
    expect(formatBudget(0.005)).toBe("$0.0050")
  })

  it("says a cost the provider did not report is unknown, never $0; no cost without tokens", () => {
    expect(costOf({ promptTokens: 10, completionTokens: 20, cost: 0.001 })).toBe("$0.0010")
    expect(costOf({ promptTokens: 10, completionTokens: 20 })).toBe("cost unknown")
    expect(costOf({ promptTokens: 0, completionTokens: 0 })).toBeUndefined()
  })

  it("writes the one-line summary of a run, its cost known or not", () => {
    expect(summaryLine(manifest({ promptTokens: 60, completionTokens: 30, cost: 0.003 }), "/runs/r1", undefined))
      .toBe("parallel-llm: partial · 2/3 answered · 4.8 s · 90 tokens · $0.0030 · /runs/r1")
    expect(summaryLine(manifest({ promptTokens: 1200, completionTokens: 34 }), "/runs/r1", undefined))
      .toBe("parallel-llm: partial · 2/3 answered · 4.8 s · 1,234 tokens · cost unknown · /runs/r1")
    expect(summaryLine(manifest({ promptTokens: 0, completionTokens: 0 }), "/runs/r1", undefined))
      .toBe("parallel-llm: partial · 2/3 answered · 4.8 s · 0 tokens · /runs/r1")
  })

  it("says tokens no call reported are unknown, never 0; counts the calls that reported none", () => {
    expect(summaryLine(manifest({ promptTokens: 0, completionTokens: 0, unreportedCalls: 2 }), "/runs/r1", undefined))
      .toBe("parallel-llm: partial · 2/3 answered · 4.8 s · tokens unknown · /runs/r1")
    // As run.json now says it: no tokens at all when no call reported any (an older one says 0, read the same).
    expect(summaryLine(manifest({ unreportedCalls: 2 }), "/runs/r1", undefined))
      .toBe("parallel-llm: partial · 2/3 answered · 4.8 s · tokens unknown · /runs/r1")
    expect(summaryLine(manifest({ promptTokens: 1200, completionTokens: 34, cost: 0.01, unreportedCalls: 1 }), "/runs/r1", undefined))
      .toBe("parallel-llm: partial · 2/3 answered · 4.8 s · 1,234 tokens (+ 1 call unreported) · $0.0100 · /runs/r1")
    expect(describeCall({ result: Either.right({ usage: undefined }), attempts: 1, latencyMs: 500 }))
      .toBe("answered in 0.5 s (tokens unknown)")
  })

  it("describes a finished call, answered or failed", () => {
    const usage = { promptTokens: 1000, completionTokens: 234, cost: 0.0123 }
    expect(describeCall({ result: Either.right({ usage }), attempts: 2, latencyMs: 41_200 }))
      .toBe("answered in 41.2 s (1,234 tokens, $0.0123, 2 attempts)")
    expect(describeCall({ result: Either.right({ usage: { promptTokens: 1, completionTokens: 1 } }), attempts: 1, latencyMs: 500 }))
      .toBe("answered in 0.5 s (2 tokens, cost unknown)")
    expect(describeCall({ result: Either.left({ message: "HTTP 503" }), attempts: 1, latencyMs: 1000 }))
      .toBe("failed after 1.0 s and 1 attempt: HTTP 503")
  })
})
