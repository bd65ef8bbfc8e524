import { formatUsd } from "../domain/format.js"
import type { FinishedRunStatus } from "../domain/manifest.js"
import { type BatchProgress, remainingOf } from "../programs/progressRecorder.js"
import type { OutputStream } from "../services/processIo.js"

// What batch and eval (which runs its items as batch runs them) share: the progress line and its view on stderr
// (their defaults: batchCli.ts).

const duration = (ms: number): string => {
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

/** What the runs cost: a cost the provider did not report is said to be unknown, never counted as $0. */
const costText = (p: BatchProgress): string => {
  const known = p.ok + p.partial + p.failed + p.cancelled - p.invalid - p.unknownCost
  if (p.unknownCost === 0) return formatUsd(p.cost)
  return known > 0 ? `${formatUsd(p.cost)} + unknown` : "cost unknown"
}

/** `37/1000 · 35 ok, 1 partial, 1 failed · 963 left · 4 running · 12.3/min · ETA 1h18m · $0.0123 · 3m02s` */
export const progressText = (p: BatchProgress): string => {
  const finished = p.ok + p.partial + p.failed + p.cancelled
  const runsFinished = finished - p.invalid
  const remaining = remainingOf(p)
  const perMinute = p.elapsedMs > 0 ? (runsFinished * 60_000) / p.elapsedMs : 0
  const eta = remaining === 0 ? "done" : perMinute > 0 ? `ETA ${duration((remaining / perMinute) * 60_000)}` : "ETA ?"
  const counts = [
    `${p.ok} ok`,
    ...(p.partial > 0 ? [`${p.partial} partial`] : []),
    `${p.failed} failed`,
    ...(p.cancelled > 0 ? [`${p.cancelled} cancelled`] : []),
    ...(p.skipped > 0 ? [`${p.skipped} skipped`] : [])
  ].join(", ")
  return `${finished}/${p.total} · ${counts} · ${remaining} left · ${p.inFlight} running · ` +
    `${perMinute.toFixed(1)}/min · ${eta} · ${costText(p)} · ${duration(p.elapsedMs)}`
}

/**
 * One status line on stderr: on a terminal redrawn in place, with other lines written above it; elsewhere
 * nothing is redrawn (the caller writes one line per finished item instead).
 */
export const makeStatusLine = (out: OutputStream) => {
  const tty = out.isTTY === true
  let status = ""
  // A pseudo-terminal without a size reports 0 columns.
  const fit = (text: string) => {
    const width = Math.max(20, (out.columns || 100) - 1)
    return text.length > width ? `${text.slice(0, width - 1)}…` : text
  }
  const redraw = () => {
    if (tty && status !== "") out.write(`\r\x1b[2K${fit(status)}`)
  }
  return {
    tty,
    /** Writes a line above the status line without tearing it. */
    log: (line: string) => {
      if (tty && status !== "") out.write("\r\x1b[2K")
      out.write(line)
      redraw()
    },
    set: (text: string) => {
      status = text
      redraw()
    },
    end: () => {
      if (tty && status !== "") out.write("\n")
      status = ""
    }
  }
}

/** What a command's progress view says: its status line, and the line for each item that ends. */
export interface ProgressWords<P, R> {
  readonly status: (progress: P) => string
  /** On a terminal, above the status line: an item that failed or was cancelled. */
  readonly trouble: (result: R) => string
  /** Elsewhere: every item that ends, with the progress after it. */
  readonly ended: (progress: P, result: R) => string
}

/**
 * Progress on stderr. On a terminal: one status line redrawn in place (every second and after each item),
 * failures and log lines printed above it. Otherwise: one line per finished item.
 */
export const makeProgressView = <P extends BatchProgress, R extends { readonly status: FinishedRunStatus }>(
  out: OutputStream,
  words: ProgressWords<P, R>
) => {
  const line = makeStatusLine(out)
  const startedAt = Date.now()
  let latest: P | undefined
  return {
    tty: line.tty,
    log: line.log,
    update: (p: P, last: R | undefined) => {
      latest = p
      if (line.tty && last !== undefined && (last.status === "failed" || last.status === "cancelled")) line.log(words.trouble(last))
      else if (!line.tty && last !== undefined) out.write(words.ended(p, last))
      line.set(words.status(p))
    },
    /** Redraws the status line with the time now (elapsed, rate and ETA move on between items). */
    tick: () => {
      if (latest !== undefined) line.set(words.status({ ...latest, elapsedMs: Date.now() - startedAt }))
    },
    latest: () => latest,
    end: line.end
  }
}
