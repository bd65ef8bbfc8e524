import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import type { Manifest, RunSettings } from "../domain/manifest.js"
import { runIdTime } from "../domain/runState.js"
import { RUN_ID_PATTERN } from "../services/runReader.js"
import { RunStore, type RunView } from "../services/RunStore.js"
import { Settings } from "../services/Settings.js"
import type { BatchItem } from "./batchInput.js"

// What an earlier pass of a batch left in the runs directory without a result line: runs that finished while
// the results file could not be written (a full disk), and runs whose process died (kill -9) with candidate
// answers on disk. A resume records the first and re-synthesizes the second instead of paying for them again.

/** A run on disk for a prompt of the batch. */
export type FoundRun =
  | { readonly _tag: "Answered"; readonly runId: string; readonly runDir: string; readonly manifest: Manifest }
  | { readonly _tag: "Interrupted"; readonly runId: string }

/** What makes a run an answer to an item: the prompt, the models and the synthesizer. */
const keyOf = (sha256: string, models: ReadonlyArray<string>, synthesizer: string) => JSON.stringify([sha256, models, synthesizer])

const sha256 = (text: string) => crypto.createHash("sha256").update(text).digest("hex")

/** A run's key and what it can give a batch; undefined for a run still going, failed, or made by something else. */
const candidateOf = (store: RunStore["Type"], view: RunView) =>
  Effect.gen(function*() {
    const keyFor = (settings: RunSettings, promptSha: string) => keyOf(promptSha, settings.models, settings.synthesizer)
    const manifest = view.manifest
    if (view.state === "finished" && manifest !== undefined && manifest.parent === undefined) {
      if (manifest.status !== "ok" && manifest.status !== "partial") return undefined
      const found: FoundRun = { _tag: "Answered", runId: view.id, runDir: view.dir, manifest }
      return { key: keyFor(manifest.settings, manifest.prompt.sha256), found }
    }
    const settings = view.owner?.settings
    if (view.state !== "interrupted" || settings === undefined || view.owner?.parent !== undefined) return undefined
    if (!view.answers.some((file) => !file.endsWith(".partial.md"))) return undefined
    const prompt = yield* store.readRunFile(view.id, "prompt.md").pipe(Effect.option)
    if (Option.isNone(prompt)) return undefined
    const found: FoundRun = { _tag: "Interrupted", runId: view.id }
    return { key: keyFor(settings, sha256(prompt.value)), found }
  })

/**
 * The runs made since `sinceMs` (when the results file was made) that answer, or half answer, an item of
 * `items`, by item id: an answered run is preferred to an interrupted one, and each run serves one item.
 * Unreadable run directories are passed over: the item is then asked again, as before.
 */
export const runsOnDisk = Effect.fnUntraced(function*(items: ReadonlyArray<BatchItem>, sinceMs: number) {
  const fs = yield* FileSystem.FileSystem
  const store = yield* RunStore
  const settings = yield* Settings
  const names = yield* fs.readDirectory(store.root).pipe(Effect.orElseSucceed(() => []))
  const ids = names.filter((name) => RUN_ID_PATTERN.test(name) && (runIdTime(name) ?? 0) >= sinceMs).sort()
  const byKey = new Map<string, Array<FoundRun>>()
  for (const id of ids) {
    const view = yield* store.readRun(id).pipe(Effect.option)
    if (Option.isNone(view)) continue
    const candidate = yield* candidateOf(store, view.value)
    if (candidate === undefined) continue
    const list = byKey.get(candidate.key) ?? []
    list.push(candidate.found)
    byKey.set(candidate.key, list)
  }
  const found = new Map<string, FoundRun>()
  for (const item of items) {
    const list = byKey.get(keyOf(item.promptSha256, item.models ?? settings.models, item.synthesizer ?? settings.synthesizer))
    if (list === undefined || list.length === 0) continue
    const answered = list.findLastIndex((run) => run._tag === "Answered")
    const [run] = list.splice(answered >= 0 ? answered : list.length - 1, 1)
    if (run !== undefined) found.set(item.id, run)
  }
  return found
})
