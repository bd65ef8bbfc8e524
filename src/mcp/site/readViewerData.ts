import { Clock, Effect, Either, Schema } from "effect"
import { stripControl } from "../../domain/text.js"
import { knownRecord } from "../../programs/strategies/registry.js"
import { readThread } from "../../programs/thread/readThread.js"
import { RunStore } from "../../services/runStore.js"
import type { LiveRuns } from "../liveRuns.js"
import { finishedResult, runningResult } from "../results.js"
import { RunOutput } from "../runOutput.js"
import { readRunView } from "../runView.js"
import { type ThreadTurn, VIEWER_TEXT_MAX_CHARS, type ViewerData } from "./viewerData.js"

// The run as the viewer page is given it: get_run's structured result (built by the same code), the
// manifest, the texts of the run's files and a follow-up's earlier turns. Everything is read from the run
// directory through the run store (files opened once, checked, capped), so another process's live run shows too.

const decodeOutput = Schema.decodeUnknown(RunOutput)

/** A file's text as the page gets it: without control characters, cut at the cap (said at the end). */
const capped = (text: string): string => {
  const clean = stripControl(text)
  return clean.length <= VIEWER_TEXT_MAX_CHARS
    ? clean
    : `${clean.slice(0, VIEWER_TEXT_MAX_CHARS)}\n\n[… ${clean.length - VIEWER_TEXT_MAX_CHARS} more characters in the file]`
}

const textsOf = (runId: string, files: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const store = yield* RunStore
    // A file that cannot be read (yet) is left out: the page says so where it would show it.
    const read = yield* Effect.forEach(files, (file) => Effect.either(store.readRunFile(runId, file)), { concurrency: 4 })
    return Object.fromEntries(files.flatMap((file, i) => {
      const text = read[i]
      return text !== undefined && Either.isRight(text) ? [[file, capped(text.right)]] : []
    }))
  })

/** A follow-up's earlier turns; none when the thread cannot be read (the page still shows the run). */
const threadOf = (parent: string | undefined) =>
  parent === undefined ? Effect.succeed<ReadonlyArray<ThreadTurn>>([]) : readThread(parent).pipe(
    Effect.map((turns) => turns.map((t): ThreadTurn => ({ runId: t.runId, prompt: capped(t.prompt), answer: capped(t.answer) }))),
    Effect.orElseSucceed((): ReadonlyArray<ThreadTurn> => [])
  )

export const readViewerData = Effect.fn("readViewerData")(function*(runs: LiveRuns, runId: string) {
  const view = yield* readRunView(runs, runId)
  const options = { resourceLinks: false, noAnswerIsError: false }
  const now = yield* Clock.currentTimeMillis
  const result = view._tag === "Finished"
    ? yield* finishedResult(view, options)
    : yield* runningResult(view, now - view.createdAt.getTime(), options)
  const output = yield* decodeOutput(result.structuredContent).pipe(Effect.orDie)
  const manifest = view._tag === "Finished" ? view.result.manifest : null
  const files = Object.keys(output.files).filter((file) => file.endsWith(".md") && file !== "final.md")
  const live = view._tag === "Running" && view.streamed !== undefined
    ? { streamed: view.streamed, ...(view.stage !== undefined ? { stage: stripControl(view.stage) } : {}) }
    : undefined
  const data: ViewerData = {
    view: output,
    manifest,
    strategy: knownRecord(manifest?.strategy),
    texts: yield* textsOf(runId, files),
    thread: yield* threadOf(manifest?.parent),
    ...(live !== undefined ? { live } : {})
  }
  return data
})
