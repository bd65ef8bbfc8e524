import { describe, expect, it } from "vitest"
import { makeProgressDisplay } from "../../src/cli/progressDisplay.js"
import type { Manifest } from "../../src/domain/manifest.js"
import type { RunEvent } from "../../src/programs/run/request.js"

/** A fake terminal that applies the few escape codes the display uses, so the test reads the screen. */
const fakeTerminal = (columns = 160) => {
  let screen: Array<string> = []
  let row = 0
  const raw: Array<string> = []
  return {
    columns,
    raw,
    screen: () => screen.slice(),
    write(text: string) {
      raw.push(text)
      const tokens = text.split(/(\x1b\[\d*[AJ]|\r|\n)/).filter((t) => t !== "")
      for (const token of tokens) {
        const up = /^\x1b\[(\d*)A$/.exec(token)
        if (up) row = Math.max(0, row - Number(up[1] || 1))
        else if (token === "\x1b[J") screen = screen.slice(0, row)
        else if (token === "\r") continue
        else if (token === "\n") row++
        else screen[row] = (screen[row] ?? "") + token
      }
    }
  }
}

const run = { id: "r1", dir: "/runs/r1", createdAt: new Date(0) }
const record = (model: string, status: "ok" | "error" | "cancelled", extra: object = {}) => ({
  model,
  status,
  attempts: 1,
  latencyMs: 1500,
  ...extra
})

describe("progress display", () => {
  it("shows the strategy's step between the candidates and the synthesis", () => {
    const term = fakeTerminal()
    const display = makeProgressDisplay(term, () => 0)
    const events: ReadonlyArray<RunEvent> = [
      { _tag: "RunStarted", run, models: ["a/one"] },
      { _tag: "StrategyStep", message: "ranking: 1/2 judges done" },
      { _tag: "SynthesisStarted", model: "a/synth", candidates: 1 }
    ]
    for (const event of events) display.onEvent(event)
    const screen = term.screen()
    expect(screen[1]).toBe("  » ranking: 1/2 judges done")
    expect(screen[2]).toContain("synthesis: a/synth")
  })

  it("draws one line per model, updates them in place, then the synthesis", () => {
    let clock = 0
    const term = fakeTerminal()
    const display = makeProgressDisplay(term, () => clock)
    const emit = (e: RunEvent) => display.onEvent(e)

    emit({ _tag: "RunStarted", run, models: ["vendor/alpha", "vendor/beta-long-name", "vendor/gamma"] })
    expect(term.screen()).toHaveLength(3)
    expect(term.screen()[0]).toMatch(/vendor\/alpha\s+asking · 0\.0 s/)

    for (let i = 0; i < 12; i++) emit({ _tag: "CandidateDelta", index: 1, text: "tok" })
    clock = 2_000
    display.tick()
    expect(term.screen()[1]).toMatch(/vendor\/beta-long-name\s+streaming · ~12 tokens · 2\.0 s/)

    emit({ _tag: "CandidateRetry", index: 2, attempt: 2 })
    expect(term.screen()[2]).toMatch(/retrying \(attempt 2\)/)

    emit({
      _tag: "CandidateFinished",
      outcome: {
        index: 0,
        model: "vendor/alpha",
        content: "a",
        record: record("vendor/alpha", "ok", { usage: { promptTokens: 10, completionTokens: 1200, cost: 0.0123 } })
      },
      finished: 1,
      answered: 1,
      total: 3
    })
    emit({
      _tag: "CandidateFinished",
      outcome: {
        index: 2,
        model: "vendor/gamma",
        content: undefined,
        record: record("vendor/gamma", "error", {
          attempts: 4,
          error: { tag: "ProviderFailure", message: "HTTP 502: bad gateway", httpStatus: 502 }
        })
      },
      finished: 2,
      answered: 1,
      total: 3
    })
    expect(term.screen()[0]).toMatch(/✓ vendor\/alpha\s+answered in 1\.5 s · 1,210 tokens · \$0\.0123/)
    expect(term.screen()[2]).toMatch(/✗ vendor\/gamma\s+failed after 1\.5 s, 4 attempts: HTTP 502: bad gateway/)

    display.log("12:00:00 WARN  something to say")
    expect(term.screen()[0]).toBe("12:00:00 WARN  something to say")
    expect(term.screen()).toHaveLength(4)

    emit({
      _tag: "CandidateFinished",
      outcome: {
        index: 1,
        model: "vendor/beta-long-name",
        content: undefined,
        record: record("vendor/beta-long-name", "cancelled", { reason: "quorum" })
      },
      finished: 3,
      answered: 1,
      total: 3
    })
    emit({ _tag: "SynthesisStarted", model: "vendor/judge", candidates: 1 })
    expect(term.screen()[4]).toMatch(/synthesis: vendor\/judge\s+asking/)
    const manifest = {
      synthesis: { model: "vendor/judge", status: "ok", attempts: 1, latencyMs: 3000, usage: { promptTokens: 5, completionTokens: 5 } }
    } as unknown as Manifest
    emit({ _tag: "RunFinished", manifest, runDir: "/runs/r1" })
    display.close()
    const screen = term.screen()
    expect(screen).toHaveLength(5)
    expect(screen[2]).toMatch(/⊘ vendor\/beta-long-name\s+cancelled after 1\.5 s \(quorum\)/)
    expect(screen[4]).toMatch(/✓ synthesis: vendor\/judge\s+answered in 3\.0 s · 10 tokens/)
    // Nothing is drawn after close.
    const writes = term.raw.length
    display.tick()
    expect(term.raw.length).toBe(writes)
  })

  it("never draws a line wider than the terminal (wrapping would break the in-place update)", () => {
    const term = fakeTerminal(40)
    const display = makeProgressDisplay(term, () => 0)
    display.onEvent({ _tag: "RunStarted", run, models: ["a-very-long-vendor-name/an-even-longer-model-name-here"] })
    for (const line of term.screen()) expect(line.length).toBeLessThan(40)
  })
})
