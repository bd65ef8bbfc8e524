import { Array as Arr } from "effect"
import type { ChatMessage } from "../../domain/modelCall.js"
import type { Attachment } from "../attachments/attachment.js"
import { userMessageOf } from "../attachments/plan.js"

// A follow-up question carries the conversation as the user saw it: each earlier turn's prompt and its
// final answer, oldest first. Pure: reading the turns from the run store is readThread.ts.

/** One earlier turn: a run's prompt with its attachments, and the final answer the user got. */
export interface Turn {
  readonly runId: string
  readonly prompt: string
  readonly attachments: ReadonlyArray<Attachment>
  readonly answer: string
}

/** What a follow-up run continues: its parent run and the earlier turns that fit the context budget. */
export interface Thread {
  /** The run the follow-up continues: the newest turn's. */
  readonly parent: string
  /** The turns sent, oldest first; the parent's is always among them. */
  readonly turns: ReadonlyArray<Turn>
  /** How many older turns were left out to fit the budget. */
  readonly omitted: number
  /** The models that read images (from the provider's `/models`), when an earlier turn attached one. */
  readonly imageReaders?: ReadonlySet<string> | undefined
}

/** What a turn adds to the conversation's size: its prompt, answer and attached text (images and PDFs are parts). */
const turnChars = (turn: Turn) =>
  turn.prompt.length + turn.answer.length + turn.attachments.reduce((sum, a) => sum + (a.text?.length ?? 0), 0)

/**
 * The newest turns whose prompts and answers fit `maxChars` together: the oldest are left out first. The
 * last turn (the one followed up on) is always kept, whatever its size: without it the follow-up means nothing.
 */
export const fitThread = (turns: Arr.NonEmptyReadonlyArray<Turn>, maxChars: number): Thread => {
  const parent = Arr.lastNonEmpty(turns)
  let kept = 1
  let total = turnChars(parent)
  while (kept < turns.length && total + turnChars(turns[turns.length - 1 - kept]!) <= maxChars) {
    total += turnChars(turns[turns.length - 1 - kept]!)
    kept++
  }
  return { parent: parent.runId, turns: turns.slice(turns.length - kept), omitted: turns.length - kept }
}

/** The visible note where older turns were left out. */
const omittedMarker = (omitted: number) => `[… ${omitted} earlier turn${omitted === 1 ? "" : "s"} left out to fit the context budget …]`

/** A user message headed by a note: in its text, or as a first text part. */
const headedBy = (note: string, message: ChatMessage): ChatMessage => ({
  ...message,
  content: typeof message.content === "string"
    ? `${note}\n\n${message.content}`
    : [{ type: "text", text: `${note}\n\n` }, ...message.content]
})

/**
 * The earlier turns as alternating user and assistant messages, oldest first, as candidate `model` receives
 * them: each prompt with its attachments (as that turn sent them, images only to a model that reads them),
 * then its answer; the new prompt follows. The note about left-out turns heads the first user message, so
 * that the roles still alternate.
 */
export const threadMessages = (thread: Thread | undefined, model: string): ReadonlyArray<ChatMessage> =>
  thread === undefined ? [] : thread.turns.flatMap((turn, i): ReadonlyArray<ChatMessage> => {
    const asked = userMessageOf(turn.prompt, turn.attachments, thread.imageReaders?.has(model) ?? false)
    return [
      i === 0 && thread.omitted > 0 ? headedBy(omittedMarker(thread.omitted), asked) : asked,
      { role: "assistant", content: turn.answer }
    ]
  })

/** The earlier turns as text, for the synthesizer: it must know what the follow-up refers to. */
export const threadText = (thread: Thread): string =>
  [
    "# The conversation so far",
    "",
    "The user's prompt below follows up on this conversation (oldest turn first); every candidate saw it too.",
    ...(thread.omitted > 0 ? ["", omittedMarker(thread.omitted)] : []),
    ...thread.turns.flatMap((turn) => [
      "",
      "<user>",
      ...(turn.attachments.length > 0 ? [`(attached: ${turn.attachments.map((a) => a.path).join(", ")})`] : []),
      turn.prompt,
      "</user>",
      "",
      "<assistant>",
      turn.answer,
      "</assistant>"
    ])
  ].join("\n")

/** Characters of the earlier turns a run sends each candidate, for the run's size and cost checks. */
export const threadChars = (thread: Thread | undefined): number =>
  thread === undefined ? 0 : thread.turns.reduce((sum, turn) => sum + turnChars(turn), 0)

/** What the readers of the answers (synthesizer, judges, refiners) are shown of a follow-up's earlier turns. */
export const conversationOf = (thread: Thread | undefined): string | undefined => (thread === undefined ? undefined : threadText(thread))
