import { Either } from "effect"
import type { AttachmentForm } from "../../domain/manifest.js"
import { slugOf } from "../../domain/model.js"

/** What a file is, decided from its first bytes: text goes into the prompt, images and PDFs as content parts. */
export type AttachmentKind = "text" | "image" | "pdf"

/** One file attached to a prompt, read and checked. */
export interface Attachment {
  /** The path as given (for a directory or a glob: the file's path below what was given). */
  readonly path: string
  readonly kind: AttachmentKind
  readonly mediaType: string
  readonly bytes: Uint8Array
  readonly sha256: string
  /** The text of a text file (UTF-8, without a byte-order mark). */
  readonly text?: string | undefined
  /** From an earlier run (a re-synthesis): how its candidates received the file. */
  readonly sentAs?: Readonly<Record<string, AttachmentForm>> | undefined
  /** From an earlier run: its note, if it had one. */
  readonly note?: string | undefined
}

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + signature.length && signature.every((b, i) => bytes[at + i] === b)
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0))

/** Images the chat APIs accept, by their magic bytes; then PDF. */
const SIGNATURES: ReadonlyArray<{ readonly mediaType: string; readonly kind: AttachmentKind; readonly test: (b: Uint8Array) => boolean }> =
  [
    { mediaType: "image/png", kind: "image", test: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
    { mediaType: "image/jpeg", kind: "image", test: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
    { mediaType: "image/gif", kind: "image", test: (b) => startsWith(b, ascii("GIF87a")) || startsWith(b, ascii("GIF89a")) },
    { mediaType: "image/webp", kind: "image", test: (b) => startsWith(b, ascii("RIFF")) && startsWith(b, ascii("WEBP"), 8) },
    { mediaType: "application/pdf", kind: "pdf", test: (b) => startsWith(b, ascii("%PDF-")) }
  ]

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/** Text when it is valid UTF-8 without NUL bytes (what `git` and editors call text). */
const asText = (bytes: Uint8Array): string | undefined =>
  bytes.includes(0) ? undefined : Either.getOrUndefined(Either.try(() => utf8.decode(bytes)))

/** What the bytes are: an image, a PDF, text, or (undefined) another binary file. */
export const sniff = (
  bytes: Uint8Array
): { readonly kind: AttachmentKind; readonly mediaType: string; readonly text?: string } | undefined => {
  const known = SIGNATURES.find((s) => s.test(bytes))
  if (known !== undefined) return { kind: known.kind, mediaType: known.mediaType }
  const text = asText(bytes)
  return text === undefined ? undefined : { kind: "text", mediaType: "text/plain", text }
}

/** The copy's name in the run directory: `NN-<name>`, NN its 1-based position, the file name made safe. */
export const attachmentFileName = (index: number, filePath: string): string =>
  `${String(index + 1).padStart(2, "0")}-${slugOf(filePath.split(/[\\/]/).filter((p) => p !== "").pop() ?? "file")}`

/** How candidate `model` receives an attachment, given the models known to read images. */
export const formFor = (attachment: Attachment, seesImages: boolean): AttachmentForm =>
  attachment.kind === "text" ? "text" : attachment.kind === "pdf" ? "file" : seesImages ? "image" : "note"
