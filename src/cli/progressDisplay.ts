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

/** What the block shows, and how much of it is on screen; one display's own state, changed in place. */
interface Block {
  models: ReadonlyArray<string>
  lines: Array<Line>
  synthesis: { model: string; line: Line } | undefined
  /** The strategy step's latest line (judges ranking, a refinement round). */
  stage: string | undefined
  /** Rows drawn last, to move back over. */
  drawn: number
  /** Which spinner character the streaming lines show. */
  frame: number
  closed: boolean
}

/**
 * Live progress for `ask` on a terminal: one line per model updated in place, then the synthesis.
 * Log lines are printed above the block. It only ever writes to the stream it is given (stderr).
 */
export const makeProgressDisplay = (out: TerminalLike, now: () => number = Date.now) => {
  const block: Block = { models: [], lines: [], synthesis: undefined, stage: undefined, drawn: 0, frame: 0, closed: false }
  const render = () => {
    if (block.closed) return
    block.frame++
    const rows = frameLines(block, now).map((row) => fit(row, out.columns))
    out.write(erase(block) + rows.map((r) => `${r}\n`).join(""))
    block.drawn = rows.length
  }
  return {
    onEvent: (event: RunEvent): void => {
      if (apply(block, event, now)) render()
    },
    /** Redraws (spinners, elapsed time): called on a timer while the run goes. */
    tick: render,
    /** Prints a line above the live block. */
    log: (line: string): void => {
      const text = line.endsWith("\n") ? line : `${line}\n`
      if (block.closed) {
        out.write(text)
        return
      }
      out.write(erase(block) + text)
      block.drawn = 0
      render()
    },
    /** Leaves the last frame on screen; later output goes below it. */
    close: (): void => {
      render()
      block.closed = true
    }
  }
}

export type ProgressDisplay = ReturnType<typeof makeProgressDisplay>

/** A row cut to the terminal's width: a wrapped row would break moving back over the block. */
const fit = (text: string, columns: number | undefined) => {
  const width = Math.max(20, (columns ?? 100) - 1)
  return text.length > width ? `${text.slice(0, width - 1)}…` : text
}

/** Moves back over the block and clears it. */
const erase = (block: Block) => (block.drawn > 0 ? `\x1b[${block.drawn}A\r\x1b[J` : "")

const describe = (block: Block, now: () => number, label: string, line: Line, pad: number): string => {
  const name = label.padEnd(pad)
  switch (line.state) {
    case "waiting":
      return `  · ${name}  waiting`
    case "streaming": {
      const spinner = SPINNER[block.frame % SPINNER.length]
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

const frameLines = (block: Block, now: () => number): Array<string> => {
  const pad = Math.max(0, ...block.models.map((m) => m.length))
  const rows = block.models.map((m, i) => describe(block, now, m, block.lines[i] ?? { state: "waiting" }, pad))
  if (block.stage !== undefined) rows.push(`  » ${block.stage}`)
  if (block.synthesis) rows.push(describe(block, now, `synthesis: ${block.synthesis.model}`, block.synthesis.line, pad))
  return rows
}

/** Applies one run event to the block; whether to redraw now (a token is drawn by the ticker, not per token). */
const apply = (block: Block, event: RunEvent, now: () => number): boolean => {
  switch (event._tag) {
    case "RunStarted":
      block.models = event.models
      block.lines = event.models.map(() => ({ state: "streaming", since: now(), deltas: 0 }))
      return true
    case "CandidateDelta": {
      const line = block.lines[event.index]
      if (line?.state === "streaming") block.lines[event.index] = { ...line, deltas: line.deltas + 1 }
      return false
    }
    case "CandidateRetry": {
      const line = block.lines[event.index]
      if (line?.state === "streaming") block.lines[event.index] = { ...line, deltas: 0, attempt: event.attempt }
      return true
    }
    case "CandidateFinished":
      block.lines[event.outcome.index] = { state: "done", record: event.outcome.record }
      return true
    case "StrategyStep":
      block.stage = event.message
      return true
    case "SynthesisStarted":
      block.synthesis = { model: event.model, line: { state: "streaming", since: now(), deltas: 0 } }
      return true
    case "SynthesisDelta": {
      const synthesis = block.synthesis
      if (synthesis?.line.state === "streaming") synthesis.line = { ...synthesis.line, deltas: synthesis.line.deltas + 1 }
      return false
    }
    case "RunFinished": {
      const record = event.manifest.synthesis
      if (record && block.synthesis) block.synthesis = { model: record.model, line: { state: "done", record } }
      return true
    }
  }
  return true
}
