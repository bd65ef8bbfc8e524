import { costOf, formatCount, formatSeconds, plural, tokensOf } from "../domain/format.js"
import type { CandidateRecord } from "../domain/manifest.js"
import type { RunEvent } from "../programs/run/request.js"

/** Where the display draws: a terminal's stderr, or a fake one in tests. */
export interface TerminalLike {
  write(text: string): unknown
  readonly columns?: number | undefined
}

type Line =
  | { readonly state: "waiting" }
  | { readonly state: "streaming"; readonly since: number; readonly deltas: number; readonly attempt?: number }
  | { readonly state: "done"; readonly record: CandidateRecord }

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

const describeDone = (record: CandidateRecord): { mark: string; text: string } => {
  const took = formatSeconds(record.latencyMs ?? 0)
  switch (record.status) {
    case "ok": {
      const figures = record.usage ? [`${formatCount(tokensOf(record.usage))} tokens`, costOf(record.usage)] : []
      return { mark: "✓", text: [`answered in ${took}`, ...figures.filter((f) => f !== undefined)].join(" · ") }
    }
    case "cancelled":
      return { mark: "⊘", text: `cancelled after ${took}${record.reason ? ` (${record.reason})` : ""}` }
    default:
      return {
        mark: "✗",
        text: `${record.status === "timeout" ? "timed out" : "failed"} after ${took}, ${plural(record.attempts, "attempt")}: ${
          record.error?.message ?? "unknown error"
        }`
      }
  }
}

/**
 * Live progress for `ask` on a terminal: one line per model updated in place, then the synthesis.
 * Log lines are printed above the block. It only ever writes to the stream it is given (stderr).
 */
export const makeProgressDisplay = (out: TerminalLike, now: () => number = Date.now) => {
  let models: ReadonlyArray<string> = []
  let lines: Array<Line> = []
  let synthesis: { model: string; line: Line } | undefined
  /** The strategy step's latest line (judges ranking, a refinement round). */
  let stage: string | undefined
  let drawn = 0
  let frame = 0
  let closed = false

  const fit = (text: string) => {
    const width = Math.max(20, (out.columns ?? 100) - 1)
    return text.length > width ? `${text.slice(0, width - 1)}…` : text
  }

  const describe = (label: string, line: Line, pad: number): string => {
    const name = label.padEnd(pad)
    switch (line.state) {
      case "waiting":
        return `  · ${name}  waiting`
      case "streaming": {
        const spinner = SPINNER[frame % SPINNER.length]
        const progress = line.deltas > 0
          ? `streaming · ~${formatCount(line.deltas)} tokens`
          : line.attempt
          ? `retrying (attempt ${line.attempt})`
          : "asking"
        return `  ${spinner} ${name}  ${progress} · ${formatSeconds(now() - line.since)}`
      }
      case "done": {
        const { mark, text } = describeDone(line.record)
        return `  ${mark} ${name}  ${text}`
      }
    }
  }

  const frameLines = (): ReadonlyArray<string> => {
    const pad = Math.max(0, ...models.map((m) => m.length))
    const rows = models.map((m, i) => describe(m, lines[i] ?? { state: "waiting" }, pad))
    if (stage !== undefined) rows.push(`  » ${stage}`)
    if (synthesis) rows.push(describe(`synthesis: ${synthesis.model}`, synthesis.line, pad))
    return rows.map(fit)
  }

  /** Moves back over the block and clears it. */
  const erase = () => (drawn > 0 ? `\x1b[${drawn}A\r\x1b[J` : "")

  const render = () => {
    if (closed) return
    frame++
    const rows = frameLines()
    out.write(erase() + rows.map((r) => `${r}\n`).join(""))
    drawn = rows.length
  }

  return {
    onEvent: (event: RunEvent): void => {
      switch (event._tag) {
        case "RunStarted":
          models = event.models
          lines = event.models.map(() => ({ state: "streaming", since: now(), deltas: 0 }))
          break
        case "CandidateDelta": {
          const line = lines[event.index]
          if (line?.state === "streaming") lines[event.index] = { ...line, deltas: line.deltas + 1 }
          return // redrawn by the ticker, not per token
        }
        case "CandidateRetry": {
          const line = lines[event.index]
          if (line?.state === "streaming") lines[event.index] = { ...line, deltas: 0, attempt: event.attempt }
          break
        }
        case "CandidateFinished":
          lines[event.outcome.index] = { state: "done", record: event.outcome.record }
          break
        case "StrategyStep":
          stage = event.message
          break
        case "SynthesisStarted":
          synthesis = { model: event.model, line: { state: "streaming", since: now(), deltas: 0 } }
          break
        case "SynthesisDelta":
          if (synthesis?.line.state === "streaming") synthesis.line = { ...synthesis.line, deltas: synthesis.line.deltas + 1 }
          return
        case "RunFinished": {
          const record = event.manifest.synthesis
          if (record && synthesis) synthesis = { model: record.model, line: { state: "done", record } }
          break
        }
      }
      render()
    },
    /** Redraws (spinners, elapsed time): called on a timer while the run goes. */
    tick: render,
    /** Prints a line above the live block. */
    log: (line: string): void => {
      if (closed) {
        out.write(line.endsWith("\n") ? line : `${line}\n`)
        return
      }
      out.write(erase() + (line.endsWith("\n") ? line : `${line}\n`))
      drawn = 0
      render()
    },
    /** Leaves the last frame on screen; later output goes below it. */
    close: (): void => {
      render()
      closed = true
    }
  }
}

export type ProgressDisplay = ReturnType<typeof makeProgressDisplay>
