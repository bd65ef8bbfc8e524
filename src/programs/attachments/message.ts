import type { ContentPart } from "../../domain/modelCall.js"
import type { Attachment } from "./attachment.js"

/** A fence longer than any run of backticks in the text, so the text cannot close it. */
const fenceFor = (text: string) => "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)))

/** The language hint of a fenced block: the file's extension, when it looks like one. */
const languageOf = (file: string) => /\.([A-Za-z0-9+#-]{1,15})$/.exec(file)?.[1]?.toLowerCase() ?? ""

/** A text file as a fenced block headed by its path. */
export const textBlock = (path: string, text: string, cutNote = ""): string => {
  const fence = fenceFor(text)
  return `File: ${path}\n${fence}${languageOf(path)}\n${text}${text.endsWith("\n") ? "" : "\n"}${fence}${cutNote}`
}

const dataUrl = (attachment: Attachment) => `data:${attachment.mediaType};base64,${Buffer.from(attachment.bytes).toString("base64")}`

/** The line a model that cannot see images gets in place of one. */
const imageNote = (path: string) =>
  `(An image, ${path}, is attached to this question, but you cannot see it: this model does not accept images.)`

/**
 * The user message one candidate receives: the text files as fenced blocks headed by their path, then the
 * images (as image parts when `seesImages`, else a one-line note each) and PDFs (file parts), then the prompt.
 * Without images or PDFs it stays one string, which every OpenAI-compatible server accepts.
 */
export const userContent = (
  prompt: string,
  attachments: ReadonlyArray<Attachment>,
  seesImages: boolean
): string | ReadonlyArray<ContentPart> => {
  if (attachments.length === 0) return prompt
  const texts = attachments.flatMap((a) =>
    a.kind === "text" ? [textBlock(a.path, a.text ?? "")] : a.kind === "image" && !seesImages ? [imageNote(a.path)] : []
  )
  const parts: Array<ContentPart> = attachments.flatMap((a): ReadonlyArray<ContentPart> =>
    a.kind === "image" && seesImages
      ? [{ type: "image_url", image_url: { url: dataUrl(a) } }]
      : a.kind === "pdf"
      ? [{ type: "file", file: { filename: a.path.split(/[\\/]/).pop() ?? a.path, file_data: dataUrl(a) } }]
      : []
  )
  const lead = texts.length > 0 ? [`${texts.join("\n\n")}\n\n`] : []
  if (parts.length === 0) return `${lead.join("")}${prompt}`
  return [...lead.map((text): ContentPart => ({ type: "text", text })), ...parts, { type: "text", text: prompt }]
}

const cutMarker = (cut: number) => `\n[… ${cut} characters of this file cut here to fit the synthesizer's context budget …]`

/**
 * The question as the candidates were asked it, for the synthesizer: the text files as fenced blocks (cut
 * with a marker when they exceed `budgetChars` together, the longest first), the images and PDFs named in a
 * line each (the synthesizer judges answers; it is not sent them), then the prompt.
 */
export const questionAsAsked = (
  prompt: string,
  attachments: ReadonlyArray<Attachment>,
  budgetChars: number,
  shares: (lengths: ReadonlyArray<number>, budget: number) => ReadonlyArray<number>
): string => {
  if (attachments.length === 0) return prompt
  const texts = attachments.filter((a) => a.kind === "text")
  const allowance = shares(texts.map((a) => (a.text ?? "").length), budgetChars)
  // The text files' shares in their order (not looked up with indexOf: that made a thousand files a million steps).
  let nextText = 0
  const blocks = attachments.map((a) => {
    if (a.kind !== "text") {
      return `(${a.kind === "image" ? "An image" : "A PDF"}, ${a.path}, is attached to this question; it is not shown to you.)`
    }
    const text = a.text ?? ""
    const keep = allowance[nextText++] ?? text.length
    return keep < text.length ? textBlock(a.path, text.slice(0, keep), cutMarker(text.length - keep)) : textBlock(a.path, text)
  })
  return `${blocks.join("\n\n")}\n\n${prompt}`
}
