import { Effect, Option } from "effect"
import * as path from "node:path"
import { RunRefused, type StoreError } from "../domain/errors.js"
import { answeredOf, formatSeconds, formatUsd, summaryLine } from "../domain/format.js"
import { formatReport } from "../domain/reportFormat.js"
import { readRunWithManifest } from "../programs/recoverRun.js"
import { strategySteps } from "../programs/strategies/registry.js"
import { RunStore } from "../services/runStore.js"
import type { Settings } from "../services/settings.js"
import type { ParsedArgs } from "./flags.js"
import { type Outcome, succeeded } from "./outcome.js"
import { writeStdout as write } from "./output.js"
import type { runsCli, showCli } from "./runsCli.js"
import { threadLines } from "./threadView.js"

/** `runs show ID`: an unknown run is refused (exit 2). */
export const show = (
  args: ParsedArgs<typeof showCli>
): Effect.Effect<Outcome, RunRefused | StoreError, RunStore | Settings> =>
  Effect.as(
    Effect.gen(function*() {
      const store = yield* RunStore
      const notFound = (e: { readonly message: string }) => new RunRefused({ message: e.message })
      // A run whose process died is shown from what it left: its owner record and the answers on disk.
      const { view, manifest: found } = yield* readRunWithManifest(args.runId).pipe(
        Effect.catchTags({ InvalidRunPath: (e) => Effect.fail(notFound(e)), RunFileNotFound: (e) => Effect.fail(notFound(e)) })
      )
      if (found === undefined) {
        const owner = view.owner ? ` (process ${view.owner.pid} on ${view.owner.host})` : ""
        return yield* new RunRefused({
          message: view.state === "running"
            ? `run ${args.runId} is still going${owner}; answers so far: ${view.answers.join(", ") || "none"}`
            : `run ${args.runId} has no readable run.json`
        })
      }
      const manifest = found
      const final = yield* store.readRunFile(args.runId, "final.md").pipe(Effect.option, Effect.map(Option.getOrUndefined))
      if (args.json) return yield* write(JSON.stringify({ ...manifest, final: final ?? null }, null, 2))
      const candidates = manifest.candidates.map((c) =>
        `  ${c.status.padEnd(9)} ${c.model}${c.latencyMs !== undefined ? ` · ${formatSeconds(c.latencyMs)}` : ""}` +
        `${c.error ? ` · ${c.error.message}` : ""}${c.reason ? ` · ${c.reason}` : ""}`
      )
      const interrupted = manifest.status === "interrupted"
        ? [
          `  ${manifest.error ?? "interrupted"}`,
          `  answers on disk: ${view.answers.join(", ") || "none"}`,
          ...(view.answers.some((a) => !a.endsWith(".partial.md")) ? [`  to synthesize them: parallel-llm resynth ${manifest.id}`] : [])
        ]
        : []
      const synthesis = manifest.synthesis
        ? [
          `  synthesis ${manifest.synthesis.model}: ${manifest.synthesis.status}${
            manifest.synthesis.fallbackToCandidate ? ` (answer of ${manifest.synthesis.fallbackToCandidate})` : ""
          }`
        ]
        : []
      yield* write([
        summaryLine(manifest, path.join(store.root, manifest.id), strategySteps(manifest.strategy)),
        ...(manifest.source ? [`  re-synthesis of run ${manifest.source}`] : []),
        ...(manifest.parent ? [`  follow-up of run ${manifest.parent}`] : []),
        ...interrupted,
        ...candidates,
        ...synthesis,
        ...(yield* threadLines(manifest)),
        "",
        final ?? `(no answer${manifest.error ? `: ${manifest.error}` : ""})`,
        ...(args.report ? ["", formatReport(manifest)] : [])
      ].join("\n"))
    }),
    succeeded
  )

/** `runs`: the list. */
export const runs = (args: ParsedArgs<typeof runsCli>): Effect.Effect<Outcome, StoreError, RunStore> =>
  Effect.as(
    Effect.gen(function*() {
      const store = yield* RunStore
      const runs = yield* store.listRuns(args.limit)
      const rows = runs.map((r) => ({
        id: r.id,
        time: (r.manifest?.createdAt ?? r.owner?.createdAt ?? "").replace("T", " ").slice(0, 19),
        status: r.manifest?.status ?? r.state,
        answered: r.manifest
          ? answeredOf(r.manifest)
          : r.owner?.settings
          ? `${r.answers.filter((a) => !a.endsWith(".partial.md")).length}/${r.owner.settings.models.length}`
          : "-",
        seconds: r.manifest ? (r.manifest.durationMs / 1000).toFixed(1) : "-",
        cost: r.manifest?.usage.cost !== undefined ? formatUsd(r.manifest.usage.cost) : "-",
        prompt: r.promptPreview.replace(/\s+/g, " ").trim()
      }))
      if (args.json) return yield* write(JSON.stringify(rows.map((row, i) => ({ ...row, runDir: runs[i]!.dir })), null, 2))
      if (rows.length === 0) return yield* write(`no runs yet in ${store.root}`)
      const header = { id: "id", time: "time", status: "status", answered: "answered", seconds: "seconds", cost: "cost", prompt: "prompt" }
      const columns = ["id", "time", "status", "answered", "seconds", "cost"] as const
      const widths = columns.map((c) => Math.max(header[c].length, ...rows.map((r) => r[c].length)))
      const line = (r: typeof header) => [...columns.map((c, i) => r[c].padEnd(widths[i]!)), r.prompt.slice(0, 60)].join("  ").trimEnd()
      yield* write([header, ...rows].map(line).join("\n"))
    }),
    succeeded
  )
