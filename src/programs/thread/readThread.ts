import { Array as Arr, Effect, Either } from "effect"
import { RunRefused, type StoreError } from "../../domain/errors.js"
import { plural } from "../../domain/format.js"
import type { Manifest } from "../../domain/manifest.js"
import type { InvalidRunPath, RunFileNotFound, RunView } from "../../services/runReader.js"
import { RunStore } from "../../services/runStore.js"
import { Settings } from "../../services/settings.js"
import { imageReaders, loadRunAttachments } from "../attachments/plan.js"
import { readRunWithManifest } from "../recoverRun.js"
import { fitThread, type Thread, type Turn } from "./turns.js"

// The turns of a thread, read by walking `parent` links from the newest run back to the first. Every id
// (the caller's and those in manifests) goes through the run store's checks, as get_run's do.

/** How a run ended without a final answer, said the way a sentence needs it. */
const endedWithout = (manifest: Manifest | undefined): string => {
  switch (manifest?.status) {
    case undefined:
      return "has no readable run.json"
    case "failed":
      return "failed (status failed) without a final answer"
    case "cancelled":
      return "was cancelled (status cancelled) before its final answer"
    case "interrupted":
      return "was interrupted (status interrupted: its process ended) before its final answer"
    case "ok":
    case "partial":
      return `has no final answer (status ${manifest.status}, but no final.md)`
  }
}

/**
 * Why a run cannot be a turn of a thread, and what to do instead; undefined when it has its final answer.
 * `subject` names the run in the sentence ("it", or "run X, an earlier turn of its thread,").
 */
const noAnswer = (subject: string, view: RunView, manifest: Manifest | undefined): string | undefined => {
  if (view.state === "running") {
    return `${subject} is still running (status running): wait for its answer (get_run, or parallel-llm runs show ${view.id}), ` +
      "then continue it"
  }
  if (manifest?.synthesis?.file !== undefined) return undefined
  const hasAnswers = view.answers.some((file) => !file.endsWith(".partial.md"))
  return `${subject} ${endedWithout(manifest)}; ` + (hasAnswers
    ? `synthesize its answers first (parallel-llm resynth ${view.id}, or the resynthesize tool), then continue that new run`
    : "ask the question again instead")
}

/** Why a thread longer than the setting is refused, naming the setting. */
const tooDeep = (max: number) =>
  `its thread holds more than ${plural(max, "turn")} (--follow-up-max-turns, PARALLEL_LLM_FOLLOW_UP_MAX_TURNS): ` +
  "ask a new question instead, or raise the setting"

/** One run of a thread as its `parent` link was followed: its manifest, or why it could not be read. */
interface Link {
  readonly id: string
  readonly manifest: Either.Either<Manifest, InvalidRunPath | RunFileNotFound | StoreError>
}

/**
 * The runs of the thread ending with `runId`, newest first, found by the `parent` links of their manifests alone
 * and no further than `limit`: a thread too long is refused from this, before any turn is read (at the default 50
 * turns, reading them all first took seconds). A link it cannot follow (no readable run.json, a loop) ends the
 * walk there: reading the turns then says why. Each manifest read here is the one its turn is built from.
 */
const threadLinks = (store: RunStore, runId: string, limit: number) =>
  Effect.gen(function*() {
    const links: Array<Link> = []
    const seen = new Set<string>()
    for (let next: string | undefined = runId; next !== undefined;) {
      if (seen.has(next)) return { links, loopsTo: next, tooLong: false }
      if (links.length >= limit) return { links, loopsTo: undefined, tooLong: true }
      seen.add(next)
      const manifest: Link["manifest"] = yield* Effect.either(store.readManifest(next))
      links.push({ id: next, manifest })
      next = Either.getOrUndefined(manifest)?.parent
    }
    return { links, loopsTo: undefined, tooLong: false }
  })

/**
 * Every turn of the thread that ends with run `runId`, oldest first: each run's prompt and final answer.
 * A run that is not there, has no final answer, or a `parent` link that loops is refused with why, and so is
 * a thread longer than `followUpMaxTurns`: it is read no further than that, however long the chain on disk.
 */
export const readThread = Effect.fn("readThread")(function*(runId: string) {
  const store = yield* RunStore
  const { followUpMaxTurns } = yield* Settings
  const refused = (why: string) => new RunRefused({ message: `cannot continue run ${runId}: ${why}` })
  const orRefused = <A, R>(effect: Effect.Effect<A, InvalidRunPath | RunFileNotFound | StoreError, R>) =>
    effect.pipe(Effect.catchTags({
      InvalidRunPath: (e) => Effect.fail(refused(e.message)),
      RunFileNotFound: (e) => Effect.fail(refused(e.message))
    }))

  /** A turn from its run's manifest: its prompt, final answer and attachments. */
  const turnFrom = (id: string, manifest: Manifest) =>
    Effect.map(
      orRefused(Effect.all([store.readRunFile(id, "prompt.md"), store.readRunFile(id, "final.md"), loadRunAttachments(id, manifest)])),
      ([prompt, answer, attachments]): Turn => ({ runId: id, prompt, attachments, answer })
    )
  /**
   * A link's turn. A run whose manifest names its final answer is built from that manifest, not read again;
   * any other is read whole (its state, its answers on disk) to say why it cannot be a turn.
   */
  const turnOf = (link: Link) =>
    Effect.gen(function*() {
      const read = Either.getOrUndefined(link.manifest)
      if (read?.synthesis?.file !== undefined) return yield* turnFrom(link.id, read)
      const subject = link.id === runId ? "it" : `run ${link.id}, an earlier turn of its thread,`
      const { view, manifest } = yield* orRefused(readRunWithManifest(link.id))
      const why = noAnswer(subject, view, manifest)
      if (why !== undefined || manifest === undefined) return yield* refused(why ?? `${subject} has no readable run.json`)
      return yield* turnFrom(link.id, manifest)
    })

  const { links, loopsTo, tooLong } = yield* threadLinks(store, runId, followUpMaxTurns)
  if (tooLong) return yield* refused(tooDeep(followUpMaxTurns))
  // Newest first, as the links were followed: the first run that cannot be a turn is the one refused.
  const turns = yield* Effect.forEach(links, turnOf)
  if (loopsTo !== undefined) return yield* refused(`its thread loops back to run ${loopsTo} (a run.json was edited?)`)
  // Never empty: --follow-up-max-turns is at least 1, so the run itself is always followed.
  return Arr.isNonEmptyArray(turns) ? Arr.reverse(turns) : yield* refused(tooDeep(followUpMaxTurns))
})

/**
 * The models that read images, as the provider's `/models` lists them; none when it cannot be read (each
 * image of an earlier turn is then a note, as for a new attachment).
 */
const earlierImageReaders = Effect.flatMap(
  imageReaders,
  Either.match({
    onLeft: (e) =>
      Effect.as(
        Effect.logWarning(`cannot read the provider's model list (${e.message}): the earlier turns' images are sent as notes`),
        new Set<string>()
      ),
    onRight: (readers) => Effect.succeed(readers)
  })
)

/** The thread a follow-up of run `runId` sends: its turns, the oldest left out first to fit `--context-max-chars`. */
export const threadFor = Effect.fn("threadFor")(function*(runId: string) {
  const settings = yield* Settings
  const turns = yield* readThread(runId)
  const thread: Thread = fitThread(turns, settings.contextMaxChars)
  if (thread.omitted > 0) {
    yield* Effect.logWarning(
      `${plural(thread.omitted, "earlier turn")} of ${turns.length} left out to fit the context budget (--context-max-chars)`
    )
  }
  if (!thread.turns.some((turn) => turn.attachments.some((a) => a.kind === "image"))) return thread
  return { ...thread, imageReaders: yield* earlierImageReaders }
})
