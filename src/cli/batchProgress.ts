import { formatUsd } from "../domain/format.js"
import { type BatchProgress, remainingOf } from "../programs/progressRecorder.js"
import type { OutputStream } from "../services/processIo.js"

// What batch and eval (which runs its items as batch runs them) share: the progress line (their defaults: batchCli.ts).

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
