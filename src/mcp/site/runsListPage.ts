import { formatUsd } from "../../domain/format.js"
import { stripControl } from "../../domain/text.js"
import type { RunSummary } from "../../services/runReader.js"
import { VIEWER_PATH } from "./viewerAccess.js"

// `GET /runs`: the runs of the output directory, newest first, as one HTML page without script. Everything
// read from a run (its prompt above all) is escaped: it is text on the page, never markup.

const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** Text as HTML text or a quoted attribute's value: control characters dropped, markup characters escaped. */
export const escapeHtml = (text: string): string => stripControl(text).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c)

/** How much of a prompt the list shows. */
const PROMPT_HEAD = 120

const row = (run: RunSummary): string => {
  const manifest = run.manifest
  const time = (manifest?.createdAt ?? run.owner?.createdAt ?? "").replace("T", " ").slice(0, 19)
  const status = manifest?.status ?? run.state
  const strategy = manifest?.strategy?.name ?? run.owner?.strategy ?? (manifest !== undefined ? "synthesize" : "–")
  const cost = manifest?.usage.cost !== undefined ? formatUsd(manifest.usage.cost) : "–"
  const prompt = run.promptPreview.replace(/\s+/g, " ").trim()
  const head = prompt.length > PROMPT_HEAD ? `${prompt.slice(0, PROMPT_HEAD)}…` : prompt
  // The id matched the run-id pattern when it was listed: it is safe in a path, and escaped all the same.
  return `<tr><td><a href="${VIEWER_PATH}/${escapeHtml(run.id)}"><code>${escapeHtml(run.id)}</code></a></td>` +
    `<td>${escapeHtml(time)}</td><td class="prompt">${escapeHtml(head)}</td>` +
    `<td class="status-${escapeHtml(status)}">${escapeHtml(status)}</td><td>${escapeHtml(strategy)}</td><td>${escapeHtml(cost)}</td></tr>`
}

const STYLE = [
  ":root { color-scheme: light dark; --fg: #1d2330; --bg: #fff; --muted: #5d6677; --line: #d9dde5; --accent: #2f5fd0; }",
  "@media (prefers-color-scheme: dark) { :root { --fg: #e3e7ee; --bg: #15181e; --muted: #9aa3b2; --line: #2f3541; --accent: #8ab0ff; } }",
  "body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, sans-serif; }",
  "main { max-width: 1200px; margin: 0 auto; padding: 16px 20px 40px; }",
  "h1 { font-size: 1.35rem; } table { border-collapse: collapse; width: 100%; }",
  "th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }",
  "th { color: var(--muted); font-weight: 600; } a { color: var(--accent); } .muted { color: var(--muted); }",
  ".prompt { overflow-wrap: anywhere; } code { font: 13px ui-monospace, Menlo, Consolas, monospace; }",
  ":focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }"
].join("\n")

export const runsListPage = (runs: ReadonlyArray<RunSummary>, root: string): string =>
  [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>parallel-llm runs</title><style>${STYLE}</style></head><body><main>`,
    `<h1>Runs</h1><p class="muted">In <code>${escapeHtml(root)}</code>, newest first.</p>`,
    runs.length === 0 ? `<p id="no-runs">No runs yet.</p>` : [
      `<table id="runs"><thead><tr><th>run</th><th>time</th><th>prompt</th><th>status</th><th>strategy</th><th>cost</th></tr></thead>`,
      `<tbody>${runs.map(row).join("")}</tbody></table>`
    ].join(""),
    `</main></body></html>`
  ].join("")
