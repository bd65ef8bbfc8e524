import { Effect, Either } from "effect"
import type { StoreError } from "../../domain/errors.js"
import { sha256Hex } from "../../domain/hash.js"
import type { AttachmentRecord, Manifest } from "../../domain/manifest.js"
import type { ChatMessage } from "../../domain/modelCall.js"
import { ATTACHMENTS_DIR, type InvalidRunPath, type RunFileNotFound } from "../../services/runReader.js"
import { type RunHandle, RunStore } from "../../services/runStore.js"
import { catalogueWithin } from "../catalogue.js"
import { type Attachment, attachmentFileName, formFor, sniff } from "./attachment.js"
import { userContent } from "./message.js"

/** A run's attachments, with what each candidate model can be sent. */
export interface AttachmentPlan {
  readonly files: ReadonlyArray<Attachment>
  /** Whether a candidate model reads images (as the provider's `/models` lists it). */
  readonly seesImages: (model: string) => boolean
  /** As the manifest lists them. */
  readonly records: ReadonlyArray<AttachmentRecord>
}

const noAttachments: AttachmentPlan = { files: [], seesImages: () => false, records: [] }

const UNKNOWN_NOTE = "the provider's model list could not be read, so whether a model reads images is unknown: " +
  "no model was sent this image, each got a note instead"

/**
 * The models that read images (`architecture.input_modalities`), from the provider's catalogue, cached per
 * process; or why it cannot say. An upstream call like the others (it holds a permit); a catalogue that does
 * not come in time is an unknown one.
 */
export const imageReaders = Effect.map(
  catalogueWithin(),
  Either.map((models): ReadonlySet<string> => new Set(models.filter((m) => m.inputModalities?.includes("image") === true).map((m) => m.id)))
)

/**
 * Settles who is sent what: with an image attached, the provider's `/models` says which candidates read
 * images (`architecture.input_modalities`); when it cannot be read, none is sent an image, which the log and
 * the manifest say. A re-synthesis (no candidate is asked) keeps what its source run recorded.
 */
export const planAttachments = Effect.fnUntraced(function*(
  files: ReadonlyArray<Attachment>,
  models: ReadonlyArray<string>,
  reuse: boolean
) {
  if (files.length === 0) return noAttachments
  const recordOf = (file: Attachment, index: number, sentAs: AttachmentRecord["sentAs"], note: string | undefined): AttachmentRecord => ({
    path: file.path,
    file: `${ATTACHMENTS_DIR}/${attachmentFileName(index, file.path)}`,
    bytes: file.bytes.length,
    sha256: file.sha256,
    mediaType: file.mediaType,
    sentAs,
    ...(note !== undefined ? { note } : {})
  })
  if (reuse) {
    return {
      files,
      seesImages: () => false,
      records: files.map((f, i) => recordOf(f, i, f.sentAs ?? {}, f.note))
    } satisfies AttachmentPlan
  }
  let readers: ReadonlySet<string> = new Set()
  let note: string | undefined
  if (files.some((f) => f.kind === "image") && models.length > 0) {
    const listed = yield* imageReaders
    if (Either.isRight(listed)) {
      readers = listed.right
    } else {
      note = UNKNOWN_NOTE
      yield* Effect.logWarning(`cannot read the provider's model list (${listed.left.message}): ${UNKNOWN_NOTE}`)
    }
    const blind = [...new Set(models.filter((m) => !readers.has(m)))]
    if (blind.length > 0 && note === undefined) {
      yield* Effect.logInfo(`${blind.join(", ")}: no image input at the provider, sent a note in place of each image`)
    }
  }
  const seesImages = (model: string) => readers.has(model)
  const records = files.map((file, i) =>
    recordOf(
      file,
      i,
      Object.fromEntries(models.map((m) => [m, formFor(file, seesImages(m))])),
      file.kind === "image" ? note : undefined
    )
  )
  return { files, seesImages, records } satisfies AttachmentPlan
})

/**
 * Starts writing the copies into the run's `attachments/` (atomically, readable by the owner only). A run with none
 * (most) reads nothing and loops over nothing.
 */
export const saveAttachments = (
  run: RunHandle,
  plan: AttachmentPlan,
  save: (write: Effect.Effect<string, StoreError>) => Effect.Effect<void>
): Effect.Effect<void, never, RunStore> =>
  plan.files.length === 0 ? Effect.void : Effect.flatMap(RunStore, (store) =>
    Effect.forEach(
      plan.files,
      (file, i) => save(store.writeAttachment(run, attachmentFileName(i, file.path), file.bytes)),
      { discard: true }
    ))

/**
 * The attachments of an earlier run, read back from its `attachments/` copies in the manifest's order, with
 * what its candidates were sent: for `resynth`, and for a follow-up that rebuilds the conversation.
 */
export const loadRunAttachments = (
  runId: string,
  manifest: Pick<Manifest, "attachments">
): Effect.Effect<ReadonlyArray<Attachment>, InvalidRunPath | RunFileNotFound | StoreError, RunStore> =>
  Effect.flatMap(
    RunStore,
    (store) =>
      Effect.forEach(manifest.attachments ?? [], (record) =>
        store.readAttachment(runId, record.file.slice(ATTACHMENTS_DIR.length + 1)).pipe(
          Effect.map((bytes): Attachment => {
            const kind = record.mediaType === "application/pdf" ? "pdf" : record.mediaType.startsWith("image/") ? "image" : "text"
            return {
              path: record.path,
              kind,
              mediaType: record.mediaType,
              bytes,
              sha256: sha256Hex(bytes),
              text: kind === "text" ? sniff(bytes)?.text : undefined,
              sentAs: record.sentAs,
              note: record.note
            }
          })
        ))
  )

/**
 * The user message of a question with its attachments, as candidate `model` receives it: the prompt with the
 * text files, and the images (when `seesImages`) and PDFs as content parts. For a follow-up's earlier turns.
 */
export const userMessageOf = (prompt: string, files: ReadonlyArray<Attachment>, seesImages: boolean): ChatMessage => ({
  role: "user",
  content: userContent(prompt, files, seesImages)
})
