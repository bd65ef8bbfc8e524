import { Chunk, Effect, Random } from "effect"
import { plural } from "../domain/format.js"
import type { ChatMessage } from "../domain/modelCall.js"
import type { ReportVia } from "../domain/report.js"
import { REPORT_DELIMITER, REPORT_JSON_SCHEMA } from "./synthesisReply.js"

export const SYNTHESIZER_INSTRUCTIONS =
  `You are the synthesizer of a panel of AI models. Several models answered the user's prompt independently. \
Their answers are labelled anonymously (Candidate A, Candidate B, …): the labels say nothing about which model wrote them \
or how good they are. They are shown in random order unless the prompt says how they were ordered.

Write the single best answer to the user's prompt:
- keep what is correct and useful from every candidate, and combine complementary points;
- where candidates disagree, decide on the merits: check the reasoning, code and facts yourself;
- fix mistakes you can see, and leave out what is wrong, unsupported or redundant;
- a candidate marked as cut was shortened to fit; do not guess what was cut.

Answer the user directly, in Markdown, as if you were answering alone. Do not mention the candidates, the panel or this process.`

const REPORT_FIELDS = `Besides the answer, report how the candidates compared, naming them by their labels (A, B, …):
- agreements: the points every candidate agrees on;
- contradictions: each point where candidates contradict each other, with every position taken and the candidates taking it;
- uniqueClaims: claims only one candidate makes;
- confidence: high, medium or low, in your answer; confidenceReason: why, in one sentence.
Leave a list empty when there is nothing to put in it. The answer itself still never mentions the candidates.`

/** How the synthesizer is told to add its disagreement report: by structured output, or after the answer in plain text. */
export const REPORT_INSTRUCTIONS: Readonly<Record<ReportVia, string>> = {
  structured: `${REPORT_FIELDS}

Reply with one JSON object in the response format given: \`answer\` holds your whole answer in Markdown, the other fields the report.`,
  text: `${REPORT_FIELDS}

After your whole answer, write a line holding exactly ${REPORT_DELIMITER}, then the report as one JSON object that \
matches this JSON Schema, and nothing after it:
${REPORT_JSON_SCHEMA}`
}

/** The synthesis messages with the report's instructions added to the system message. */
export const withReportInstructions = (messages: ReadonlyArray<ChatMessage>, via: ReportVia): ReadonlyArray<ChatMessage> =>
  messages.map((message, i) =>
    i === 0 && message.role === "system" && typeof message.content === "string"
      ? { ...message, content: `${message.content}\n\n${REPORT_INSTRUCTIONS[via]}` }
      : message
  )

export interface SynthesisInput {
  readonly model: string
  readonly content: string
  /** The label it had already been shown under (the `rank` judges'), kept so the rankings and the report agree. */
  readonly label?: string | undefined
  /** The web pages the candidate cited (web search), shown after its answer. */
  readonly citations?: ReadonlyArray<{ readonly url: string; readonly title?: string | undefined }> | undefined
}

/** A candidate's cited pages, one line each, each URL once; empty when it cited none. */
export const sourcesBlock = (citations: SynthesisInput["citations"]): string => {
  const urls = [...new Map((citations ?? []).map((c) => [c.url, c.title] as const))]
  return urls.length === 0
    ? ""
    : `\n\nWeb pages this candidate cited:\n<sources>\n${
      urls.map(([url, title]) => `- ${title !== undefined ? `${title}: ` : ""}${url}`).join("\n")
    }\n</sources>`
}

export interface SynthesisPrompt {
  readonly messages: ReadonlyArray<ChatMessage>
  /** Which label stood for which model, in the order shown. */
  readonly labels: ReadonlyArray<{ readonly label: string; readonly model: string }>
  readonly truncated: ReadonlyArray<{ readonly model: string; readonly cutChars: number }>
}

/** The user's prompt as every reader of the answers sees it (synthesizer, judges, refiners). */
export const promptSection = (prompt: string): ReadonlyArray<string> => ["# The user's prompt", "", "<prompt>", prompt, "</prompt>", ""]

export const answersHeading = (n: number): string => `# ${plural(n, "candidate answer")}`

/** A, B, …, Z, AA, AB, … */
export const labelFor = (i: number): string =>
  i < 26 ? String.fromCharCode(65 + i) : labelFor(Math.floor(i / 26) - 1) + String.fromCharCode(65 + (i % 26))

export const cutMarker = (cut: number) => `\n\n[… ${cut} characters cut here to fit the synthesizer's context budget …]`

/**
 * Per-candidate character allowances that fit `budget` in total: short candidates keep everything,
 * the long ones share what is left equally (water-filling), so no single long answer crowds out the rest.
 */
export const fairShares = (lengths: ReadonlyArray<number>, budget: number): ReadonlyArray<number> => {
  const shares = lengths.map(() => 0)
  let remaining = Math.max(0, budget)
  // Shortest first; `from` is where the ones still open start (not a copy of the rest per step: n² for many files).
  const open = lengths.map((_, i) => i).sort((a, b) => (lengths[a] ?? 0) - (lengths[b] ?? 0))
  for (let from = 0; from < open.length; from++) {
    const equal = Math.floor(remaining / (open.length - from))
    const first = open[from]!
    const shortest = lengths[first] ?? 0
    if (shortest <= equal) {
      shares[first] = shortest
      remaining -= shortest
    } else {
      for (const i of open.slice(from)) shares[i] = equal
      break
    }
  }
  return shares
}

/** Least characters a candidate keeps however small the budget, so each still says something. */
export const MIN_SHARE = 2_000

/**
 * The synthesizer's two messages: instructions as the system message, and the original prompt with the
 * successful candidates, anonymised and shuffled, as the user message; each candidate cut to fit `budgetChars`.
 */
export const buildSynthesisPrompt = Effect.fnUntraced(function*(
  prompt: string,
  candidates: ReadonlyArray<SynthesisInput>,
  budgetChars: number,
  /**
   * The `rank` strategy's verdict: the candidates come in that order (best first), under the judges' labels,
   * which this text states.
   */
  ranking?: string,
  /** For a follow-up question: the earlier turns, as text, shown before the prompt. */
  conversation?: string | undefined
) {
  const shuffled = ranking === undefined ? Chunk.toReadonlyArray(yield* Random.shuffle(candidates)) : candidates
  const sources = shuffled.map((c) => sourcesBlock(c.citations))
  const overhead = SYNTHESIZER_INSTRUCTIONS.length + prompt.length + (conversation?.length ?? 0) + 200 * shuffled.length +
    sources.reduce((n, block) => n + block.length, 0)
  const shares = fairShares(shuffled.map((c) => c.content.length), budgetChars - overhead).map((share, i) =>
    Math.min(shuffled[i]!.content.length, Math.max(share, MIN_SHARE))
  )

  const labels = shuffled.map((c, i) => c.label ?? labelFor(i))
  const truncated: Array<{ model: string; cutChars: number }> = []
  const sections = shuffled.map((candidate, i) => {
    const keep = shares[i]!
    const cut = candidate.content.length - keep
    if (cut > 0) truncated.push({ model: candidate.model, cutChars: cut })
    const text = cut > 0 ? candidate.content.slice(0, keep) + cutMarker(cut) : candidate.content
    return `## Candidate ${labels[i]!}\n\n<candidate label="${labels[i]!}">\n${text}\n</candidate>${sources[i]!}`
  })

  const user = [
    ...(conversation !== undefined ? [conversation, ""] : []),
    ...promptSection(prompt),
    ...(ranking !== undefined ? ["# How other models ranked the candidates", "", ranking, ""] : []),
    answersHeading(shuffled.length),
    "",
    sections.join("\n\n")
  ].join("\n")

  return {
    messages: [
      { role: "system", content: SYNTHESIZER_INSTRUCTIONS },
      { role: "user", content: user }
    ],
    labels: shuffled.map((c, i) => ({ label: labels[i]!, model: c.model })),
    truncated
  } satisfies SynthesisPrompt
})
