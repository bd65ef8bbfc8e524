import { Effect } from "effect"
import { stripControl } from "../domain/text.js"
import { RunStore } from "../services/runStore.js"

/** How many of the newest runs `models` looks through for what a `~…-latest` slug resolved to. */
const RECENT_RUNS = 20

/** What a model id was last served by, and in which run. */
export interface ServedBy {
  readonly servedBy: string
  readonly runId: string
}

/**
 * For each of `models` (the `~…-latest` slugs whose model list says nothing of their target), the model that
 * answered for it in the newest run that asked it: the manifests of the last {@link RECENT_RUNS} runs, newest
 * first. A store that cannot be read gives nothing: this is a hint, never a failure.
 */
export const lastServedBy = Effect.fn("lastServedBy")(function*(models: ReadonlyArray<string>) {
  const found = new Map<string, ServedBy>()
  if (models.length === 0) return found
  const runs = yield* Effect.flatMap(RunStore, (store) => store.listRuns(RECENT_RUNS)).pipe(Effect.orElseSucceed(() => []))
  for (const run of runs) {
    const manifest = run.manifest
    if (manifest === undefined) continue
    for (const call of [...manifest.candidates, ...(manifest.synthesis === undefined ? [] : [manifest.synthesis])]) {
      if (call.status === "ok" && call.servedBy !== undefined && models.includes(call.model) && !found.has(call.model)) {
        found.set(call.model, { servedBy: stripControl(call.servedBy), runId: run.id })
      }
    }
  }
  return found
})
