import { Effect, Either } from "effect"
import type { Manifest } from "../domain/manifest.js"
import { readThread } from "../programs/thread/readThread.js"
import { RunStore } from "../services/runStore.js"

/**
 * For `runs show` of a follow-up: the thread it belongs to, oldest turn first, each with its run id, prompt
 * and final answer, ending with this run's prompt (its answer follows). A broken thread is said in one line.
 * The caller writes it through `writeStdout`, which strips control characters.
 */
export const threadLines = (manifest: Manifest) =>
  Effect.gen(function*() {
    if (manifest.parent === undefined) return []
    const store = yield* RunStore
    const turns = yield* Effect.either(readThread(manifest.parent))
    if (Either.isLeft(turns)) return ["", `thread: ${turns.left.message}`]
    const prompt = yield* store.readRunFile(manifest.id, "prompt.md").pipe(Effect.orElseSucceed(() => "(no prompt.md)"))
    const turn = (n: number, runId: string, note = "") => ["", `── turn ${n} · run ${runId}${note}`, ""]
    const asked = (text: string, attached: ReadonlyArray<{ readonly path: string }>) => [
      ...(attached.length > 0 ? [`(attached: ${attached.map((a) => a.path).join(", ")})`] : []),
      "> " + text.split("\n").join("\n> ")
    ]
    return [
      ...turns.right.flatMap((t, i) => [...turn(i + 1, t.runId), ...asked(t.prompt, t.attachments), "", t.answer]),
      ...turn(turns.right.length + 1, manifest.id, " (this run)"),
      ...asked(prompt, manifest.attachments ?? [])
    ]
  })
