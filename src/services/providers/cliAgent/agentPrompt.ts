import type { ChatMessage, ContentPart } from "../../../domain/modelCall.js"

// A call's messages as one CLI agent prompt: the system message apart (for a CLI with a flag for it), the turns as
// text, and the images and files of the messages as files of the working directory, named in the prompt.

export interface AgentAttachment {
  readonly name: string
  readonly bytes: Uint8Array
  readonly image: boolean
}

export interface AgentPrompt {
  readonly system: string | undefined
  readonly prompt: string
  readonly attachments: ReadonlyArray<AgentAttachment>
}

const DATA_URL = /^data:([^;,]*)(;base64)?,(.*)$/s

/** The bytes of a `data:` URL, or none for another URL (which the CLI is told as text). */
const bytesOf = (url: string): Uint8Array | undefined => {
  const found = DATA_URL.exec(url)
  if (found === null) return undefined
  const body = found[3] ?? ""
  return found[2] !== undefined ? Buffer.from(body, "base64") : Buffer.from(decodeURIComponent(body), "utf8")
}

/** A file name of the working directory: no path, nothing outside a plain set of characters. */
const safeName = (name: string, index: number): string => {
  const base = name.replace(/^.*[\\/]/, "").replace(/[^A-Za-z0-9._-]/g, "-").replace(/^\.+/, "")
  return `${String(index).padStart(2, "0")}-${base === "" ? "attachment" : base}`
}

const extensionOf = (url: string): string => /^data:image\/([a-z0-9+.-]+)/i.exec(url)?.[1]?.replace("jpeg", "jpg") ?? "png"

const partText = (part: ContentPart, attachments: Array<AgentAttachment>): string => {
  if (part.type === "text") return part.text
  const url = part.type === "image_url" ? part.image_url.url : part.file.file_data
  const bytes = bytesOf(url)
  if (bytes === undefined) return `(attached: ${url})`
  const name = safeName(part.type === "file" ? part.file.filename : `image.${extensionOf(url)}`, attachments.length + 1)
  attachments.push({ name, bytes, image: part.type === "image_url" })
  return `(attached: the file ${name} in the working directory)`
}

const contentText = (content: ChatMessage["content"], attachments: Array<AgentAttachment>): string =>
  typeof content === "string" ? content : content.map((part) => partText(part, attachments)).join("\n\n")

/** The messages as a CLI prompt; with `systemApart` false, the system message leads the prompt. */
export const agentPrompt = (messages: ReadonlyArray<ChatMessage>, systemApart: boolean): AgentPrompt => {
  const attachments: Array<AgentAttachment> = []
  const system = messages.filter((m) => m.role === "system").map((m) => contentText(m.content, attachments)).join("\n\n")
  const turns = messages.filter((m) => m.role !== "system")
  const body = turns.length === 1 && turns[0] !== undefined
    ? contentText(turns[0].content, attachments)
    : turns.map((m) => `## ${m.role === "user" ? "User" : "Assistant"}\n\n${contentText(m.content, attachments)}`).join("\n\n")
  const lead = !systemApart && system !== "" ? `${system}\n\n---\n\n` : ""
  return { system: systemApart && system !== "" ? system : undefined, prompt: lead + body, attachments }
}
