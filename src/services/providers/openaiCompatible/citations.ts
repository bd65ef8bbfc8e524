import { Option, Schema } from "effect"
import type { Citation } from "../../../domain/modelOptions.js"
import type { Redact } from "../../../domain/redact.js"
import { stripControl } from "../../../domain/text.js"
import { UrlCitation } from "./wire.js"

/** A cited page's text is context, not the answer: the manifest keeps its start. */
const MAX_CONTENT_CHARS = 1_000
const MAX_TITLE_CHARS = 300
/** A misbehaving server cannot fill the manifest with citations. */
const MAX_CITATIONS = 100

const decodeCitation = Schema.decodeUnknownOption(UrlCitation)

const clean = (redact: Redact, text: string, max: number): string => {
  const cleaned = stripControl(redact(text)).trim()
  return cleaned.length > max ? `${cleaned.slice(0, max)}…` : cleaned
}

const NONE: ReadonlyArray<unknown> = []

/** A message's or delta's `annotations`, as a list (anything else carries none: one shared empty list, read per event). */
export const annotationList = (annotations: unknown): ReadonlyArray<unknown> => (Array.isArray(annotations) ? annotations : NONE)

/**
 * The web pages an answer cites, from its annotations (a whole message's, or every delta's of a stream):
 * each decoded on its own (another kind of annotation is passed over), its text cleaned, repeats dropped.
 */
export const citationsOf = (annotations: ReadonlyArray<unknown>, redact: Redact): ReadonlyArray<Citation> | undefined => {
  if (annotations.length === 0) return undefined
  const seen = new Set<string>()
  const citations: Array<Citation> = []
  for (const annotation of annotations) {
    if (citations.length >= MAX_CITATIONS) break
    const decoded = decodeCitation(annotation)
    if (Option.isNone(decoded)) continue
    const c = decoded.value.url_citation
    const url = clean(redact, c.url, 2_000)
    const key = `${url}\u0000${c.start_index ?? ""}\u0000${c.end_index ?? ""}`
    if (url === "" || seen.has(key)) continue
    seen.add(key)
    citations.push({
      url,
      ...(c.title != null && c.title.trim() !== "" ? { title: clean(redact, c.title, MAX_TITLE_CHARS) } : {}),
      ...(c.content != null && c.content.trim() !== "" ? { content: clean(redact, c.content, MAX_CONTENT_CHARS) } : {}),
      ...(c.start_index != null ? { startIndex: c.start_index } : {}),
      ...(c.end_index != null ? { endIndex: c.end_index } : {})
    })
  }
  return citations.length > 0 ? citations : undefined
}
