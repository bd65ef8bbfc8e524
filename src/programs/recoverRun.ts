import { Effect, Option } from "effect"
import { sha256Hex } from "../domain/hash.js"
import type { CandidateRecord, Manifest } from "../domain/manifest.js"
import { responseFileName } from "../domain/model.js"
import type { RunView } from "../services/runReader.js"
import { RunStore } from "../services/runStore.js"
import { sumUsage } from "./run/outcome.js"

/** Why an interrupted run has no manifest of its own. */
export const INTERRUPTED_REASON = "the process that owned the run ended before it finished (killed, crashed or hung up)"

/**
 * The manifest of a run whose writer died, rebuilt from its owner record and the answers on disk: status
 * `interrupted`, each candidate `ok` with its file when its answer is there, else `cancelled` (with its
 * partial answer, if any). Usage is unknown: each answer on disk counts as a call that reported none.
 * Undefined when the owner record has no settings.
 */
export const interruptedManifest = (view: RunView, prompt: string): Manifest | undefined => {
  const settings = view.owner?.settings
  if (view.owner === undefined || settings === undefined) return undefined
  const answers = new Set(view.answers)
  const createdAt = new Date(view.owner.createdAt)
  const lastWrite = view.lastWriteAt
  const candidates = settings.models.map((model, index): CandidateRecord => {
    const file = responseFileName(index, model)
    const partialFile = responseFileName(index, model, ".partial.md")
    return answers.has(file)
      ? { model, status: "ok", file, attempts: 1 }
      : { model, status: "cancelled", reason: "interrupted", attempts: 0, ...(answers.has(partialFile) ? { partialFile } : {}) }
  })
  return {
    id: view.id,
    status: "interrupted",
    createdAt: view.owner.createdAt,
    // When it died is not known: its last write is the last sign of life.
    finishedAt: (lastWrite ?? createdAt).toISOString(),
    durationMs: Math.max(0, (lastWrite ?? createdAt).getTime() - createdAt.getTime()),
    prompt: { chars: prompt.length, sha256: sha256Hex(prompt) },
    settings,
    candidates,
    usage: sumUsage(candidates),
    error: INTERRUPTED_REASON,
    ...(view.owner.attachments !== undefined ? { attachments: view.owner.attachments } : {}),
    ...(view.owner.parent !== undefined ? { parent: view.owner.parent } : {})
  }
}

/**
 * A run and its manifest: the one on disk for a finished run, a rebuilt one (`interruptedManifest`) for an
 * interrupted run, none for a run still going. For `runs show`, `resynth` and MCP `get_run`.
 */
export const readRunWithManifest = Effect.fn("readRunWithManifest")(function*(runId: string) {
  const store = yield* RunStore
  const view = yield* store.readRun(runId)
  if (view.state !== "interrupted") return { view, manifest: view.manifest }
  const prompt = yield* store.readRunFile(runId, "prompt.md").pipe(Effect.option, Effect.map(Option.getOrElse(() => "")))
  return { view, manifest: interruptedManifest(view, prompt) }
})
