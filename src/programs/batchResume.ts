import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import { sha256Hex } from "../domain/hash.js"
import type { Manifest, RunSettings, StrategyRecord } from "../domain/manifest.js"
import { runIdTime } from "../domain/runState.js"
import { RUN_ID_PATTERN, type RunView } from "../services/runReader.js"
import { RunStore } from "../services/runStore.js"
import { Settings } from "../services/settings.js"
import type { BatchItem } from "./batchInput.js"

// What an earlier pass of a batch left in the runs directory without a result line: runs that finished while
// the results file could not be written (a full disk), and runs whose process died (kill -9) with candidate
// answers on disk. A resume records the first and re-synthesizes the second instead of paying for them again.
// An eval's resume uses the same search, per strategy (see eval/evalResume.ts).

/** A run on disk for a prompt of the batch. */
export type FoundRun =
  | { readonly _tag: "Answered"; readonly runId: string; readonly runDir: string; readonly manifest: Manifest }
  | { readonly _tag: "Interrupted"; readonly runId: string }

/**
 * For eval, which compares strategies: the strategy a run must have been made with, and whether an answered
 * run's strategy record fits the current settings (rank's judges, refine's rounds). A run of unknown strategy
 * (an interrupted run whose owner record is older than the field) answers none.
 */
export interface StrategyMatch {
  readonly name: string
  readonly fits: (record: StrategyRecord | undefined) => boolean
}

/** What a run must have been made from: its prompt, and the models and synthesizer (the settings' when absent). */
export type WantedRun = Pick<BatchItem, "id" | "promptSha256" | "models" | "synthesizer">

/** The run-wide settings that change every call, as a manifest records them (run/start.ts): another's run is asked again. */
type Sampling = Pick<RunSettings, "temperature" | "maxTokens" | "reasoning">

/** What makes a run an answer to an item: the prompt, the models, the synthesizer, and how they were asked. */
const keyOf = (sha256: string, models: ReadonlyArray<string>, synthesizer: string, sampling: Sampling) =>
  JSON.stringify([sha256, models, synthesizer, sampling.temperature ?? null, sampling.maxTokens ?? null, sampling.reasoning ?? null])

/** A run's key and what it can give a batch; undefined for a run still going, failed, or made by something else. */
const candidateOf = (store: RunStore, view: RunView, match: StrategyMatch | undefined) =>
  Effect.gen(function*() {
    const keyFor = (settings: RunSettings, promptSha: string) => keyOf(promptSha, settings.models, settings.synthesizer, settings)
    const manifest = view.manifest
    if (view.state === "finished" && manifest !== undefined && manifest.parent === undefined) {
      if (manifest.status !== "ok" && manifest.status !== "partial") return undefined
      if (match !== undefined && ((manifest.strategy?.name ?? "synthesize") !== match.name || !match.fits(manifest.strategy))) {
        return undefined
      }
      const found: FoundRun = { _tag: "Answered", runId: view.id, runDir: view.dir, manifest }
      return { key: keyFor(manifest.settings, manifest.prompt.sha256), found }
    }
    const settings = view.owner?.settings
    if (view.state !== "interrupted" || settings === undefined || view.owner?.parent !== undefined) return undefined
    if (match !== undefined && view.owner?.strategy !== match.name) return undefined
    if (!view.answers.some((file) => !file.endsWith(".partial.md"))) return undefined
    const prompt = yield* store.readRunFile(view.id, "prompt.md").pipe(Effect.option)
    if (Option.isNone(prompt)) return undefined
    const found: FoundRun = { _tag: "Interrupted", runId: view.id }
    return { key: keyFor(settings, sha256Hex(prompt.value)), found }
  })

/**
 * The runs made since `sinceMs` (when the results file was made) that answer, or half answer, an item of
 * `items`, by item id: an answered run is preferred to an interrupted one, and each run serves one item.
 * Unreadable run directories are passed over: the item is then asked again, as before. With `match`, only
 * runs of that strategy count.
 */
export const runsOnDisk = Effect.fnUntraced(function*(
  items: ReadonlyArray<WantedRun>,
  sinceMs: number,
  match?: StrategyMatch
) {
  const fs = yield* FileSystem.FileSystem
  const store = yield* RunStore
  const settings = yield* Settings
  const names = yield* fs.readDirectory(store.root).pipe(Effect.orElseSucceed(() => []))
  const ids = names.filter((name) => RUN_ID_PATTERN.test(name) && (runIdTime(name) ?? 0) >= sinceMs).sort()
  const byKey = new Map<string, Array<FoundRun>>()
  for (const id of ids) {
    const view = yield* store.readRun(id).pipe(Effect.option)
    if (Option.isNone(view)) continue
    const candidate = yield* candidateOf(store, view.value, match)
    if (candidate === undefined) continue
    const list = byKey.get(candidate.key) ?? []
    list.push(candidate.found)
    byKey.set(candidate.key, list)
  }
  const sampling: Sampling = {
    temperature: settings.temperature,
    maxTokens: Option.getOrUndefined(settings.maxTokens),
    reasoning: Option.getOrUndefined(settings.reasoning)
  }
  const found = new Map<string, FoundRun>()
  for (const item of items) {
    const list = byKey.get(keyOf(item.promptSha256, item.models ?? settings.models, item.synthesizer ?? settings.synthesizer, sampling))
    if (list === undefined || list.length === 0) continue
    const answered = list.findLastIndex((run) => run._tag === "Answered")
    const [run] = list.splice(answered >= 0 ? answered : list.length - 1, 1)
    if (run !== undefined) found.set(item.id, run)
  }
  return found
})

/**
 * The runs on disk that an earlier pass made for the items still to do: only when the results file was
 * there already, and only runs made since it was (not an unrelated `ask` of the same question).
 */
export const previousRunsFor = Effect.fnUntraced(function*(
  output: string,
  todo: ReadonlyArray<WantedRun>,
  match?: StrategyMatch
) {
  const fs = yield* FileSystem.FileSystem
  const info = yield* fs.stat(output).pipe(Effect.option)
  if (Option.isNone(info) || todo.length === 0) return new Map<string, FoundRun>()
  const made = Option.getOrUndefined(info.value.birthtime)?.getTime() ?? 0
  // Run ids count milliseconds; the file's birth time may be a little later than the first run's id.
  return yield* runsOnDisk(todo, made - 1_000, match)
})
