import { describe, expect, it } from "vitest"
import { makeProgressView, type ProgressWords } from "../../src/cli/batchProgress.js"
import type { FinishedRunStatus } from "../../src/domain/manifest.js"
import { type BatchProgress, progressAtStart } from "../../src/programs/progressRecorder.js"

// The progress view batch and eval share (batch's and eval's words differ, not the view): on a terminal a status
// line redrawn in place with the items that went wrong above it; elsewhere one line per item that ends.

interface Item {
  readonly id: string
  readonly status: FinishedRunStatus
}

const words: ProgressWords<BatchProgress, Item> = {
  status: (p) => `status ${p.ok}/${p.total}`,
  trouble: (r) => `trouble ${r.id}\n`,
  ended: (p, r) => `ended ${r.id} at ${p.ok}/${p.total}\n`
}

const streamOf = (isTTY: boolean) => {
  const written: Array<string> = []
  return { written, out: { isTTY, columns: 80, write: (text: string) => written.push(text) } }
}

const after = (ok: number): BatchProgress => ({ ...progressAtStart({ total: 4, skipped: 0 }), ok })

describe("the progress view of batch and eval", () => {
  it("on a terminal: redraws the status line, and writes a failed or cancelled item above it, never an answered one", () => {
    const { written, out } = streamOf(true)
    const view = makeProgressView(out, words)
    view.update(after(1), { id: "a", status: "ok" })
    view.update(after(1), { id: "b", status: "failed" })
    view.update(after(2), { id: "c", status: "partial" })
    view.update(after(2), { id: "d", status: "cancelled" })
    view.end()
    const text = written.join("")
    expect(text).not.toContain("trouble a")
    expect(text).not.toContain("trouble c")
    expect(text.indexOf("trouble b")).toBeGreaterThan(text.indexOf("status 1/4"))
    expect(text).toContain("trouble d")
    expect(text).not.toContain("ended")
    expect(text.endsWith("status 2/4\n")).toBe(true)
    expect(view.latest()).toEqual(after(2))
  })

  it("elsewhere: one line per item that ends, nothing redrawn", () => {
    const { written, out } = streamOf(false)
    const view = makeProgressView(out, words)
    view.update(after(0), undefined)
    view.update(after(1), { id: "a", status: "ok" })
    view.update(after(1), { id: "b", status: "failed" })
    view.tick()
    view.end()
    expect(written).toEqual(["ended a at 1/4\n", "ended b at 1/4\n"])
  })
})
