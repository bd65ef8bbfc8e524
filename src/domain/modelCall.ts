import type { Effect, Stream } from "effect"
import type { ProviderError } from "./errors.js"
import type { Citation, ProviderRouting, ReasoningEffort, WebSearchLimits } from "./modelOptions.js"

// What a program says to a model and hears back, whatever the provider: the types of the `ModelClient`
// seam (src/services/modelClient.ts). A provider (src/services/providers/) maps them to its wire.

/** A piece of a multimodal user message (OpenAI-compatible content parts: text, an image, a file). */
export type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }
  | { readonly type: "file"; readonly file: { readonly filename: string; readonly file_data: string } }

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string | ReadonlyArray<ContentPart>
}

/** One call: the model, its messages and options. A provider without an option's feature ignores it. */
export interface ModelRequest {
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number
  readonly maxTokens?: number
  readonly reasoning?: { readonly effort: ReasoningEffort }
  /** Provider routing (OpenRouter's `provider`). */
  readonly provider?: ProviderRouting
  /** Models to try in order when `model` fails (OpenRouter's `models`). */
  readonly fallbacks?: ReadonlyArray<string>
  /** Web search on the server (OpenRouter's `openrouter:web_search` tool), with its limits. */
  readonly web?: WebSearch | undefined
  /** Structured output: the reply must be JSON matching this schema. */
  readonly responseFormat?: { readonly name: string; readonly schema: object } | undefined
  /** The run and trace the call belongs to (OpenRouter's Broadcast `session_id` and `trace`). */
  readonly broadcast?: Broadcast | undefined
}

/** What groups a run's calls in the provider's own traces: the run's id, our trace and the call's span. */
export interface Broadcast {
  readonly sessionId: string
  readonly traceId: string
  readonly parentSpanId?: string | undefined
  /** What the call is for (`candidate`, `judge`…). */
  readonly generationName?: string | undefined
}

/** Web search's limits (as the call record keeps them); each one unset is the server's default (not sent). */
export type WebSearch = typeof WebSearchLimits.Type

/** What the upstream provider charged, where the router says (OpenRouter's `cost_details`, USD). */
export interface CostDetails {
  readonly upstreamInferenceCost?: number
  readonly upstreamPromptCost?: number
  readonly upstreamCompletionCost?: number
}

/** Token counts as the server reported them (a count it left out is 0). */
export interface TokenUsage {
  readonly promptTokens: number
  readonly completionTokens: number
  readonly cost?: number
  readonly reasoningTokens?: number
  readonly cachedTokens?: number
  readonly costDetails?: CostDetails
  /** `subscription`: counted by a CLI agent on the user's plan (docs/cli-agents.md); its cost is the CLI's estimate. */
  readonly source?: "subscription"
}

/** What the router's response cache did with the call (OpenRouter's `X-OpenRouter-Cache-Status`, `-Age`). */
export interface CacheOutcome {
  readonly status: "hit" | "miss"
  /** How old the cached answer was, in seconds (a hit). */
  readonly ageSeconds?: number | undefined
}

/** A whole answer, as the caller's fold builds it from the parts (src/programs/answerFold.ts). */
export interface Completion {
  readonly content: string
  /** The model that really answered (and is billed): a router may send the call to another one. */
  readonly servedBy: string
  /** Absent when the server reported none: unknown, never 0 tokens. */
  readonly usage: TokenUsage | undefined
  readonly finishReason: string | undefined
  /** The web pages the answer cites (web search), when it cites any. */
  readonly citations?: ReadonlyArray<Citation> | undefined
  /** The response cache's verdict, when the server gave one. */
  readonly cache?: CacheOutcome | undefined
}

/**
 * A streamed answer, part by part. A provider emits one chunk of parts per network read (one text delta
 * for all the tokens of the read, not one per token), and `Usage`, `Citations` and then `Finish` last.
 * Every string is already cleaned of the API key.
 */
export type ModelPart =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ReasoningDelta"; readonly text: string }
  | { readonly _tag: "Citations"; readonly citations: ReadonlyArray<Citation> }
  | { readonly _tag: "Usage"; readonly usage: TokenUsage }
  | {
    readonly _tag: "Finish"
    readonly reason: string | undefined
    readonly servedBy: string
    readonly cache?: CacheOutcome | undefined
    /**
     * The transport already has the whole response: the stream's end is at hand, so its reader need not bound
     * the wait for it (answerFold.ts). Unset when a provider cannot tell: the wait is then bounded.
     */
    readonly ended?: boolean | undefined
  }

export interface ModelInfo {
  readonly id: string
  readonly name?: string | undefined
  readonly contextLength?: number | undefined
  /** USD per million tokens; undefined when unpriced (not listed, not a number, or negative). */
  readonly promptPrice?: number | undefined
  readonly completionPrice?: number | undefined
  /** A negative listed price: OpenRouter's mark of a router whose price varies (`openrouter/auto`). Unpriced. */
  readonly variablePrice?: boolean | undefined
  /** What the model reads (`text`, `image`, `file`…), when the provider says. */
  readonly inputModalities?: ReadonlyArray<string> | undefined
  /** The request parameters the provider says the model accepts. */
  readonly supportedParameters?: ReadonlyArray<string> | undefined
  /** A `~vendor/family-latest` slug: the model it resolves to now, when the list says. */
  readonly resolvesTo?: string | undefined
}

/**
 * What a provider implements: one attempt at a call, as a stream of parts, and its model list. Retries,
 * time budgets and the catalogue's cache are the caller's (`callModel`, `ModelClient`).
 */
export interface ModelProvider {
  readonly stream: (request: ModelRequest) => Stream.Stream<ModelPart, ProviderError>
  readonly listModels: () => Effect.Effect<ReadonlyArray<ModelInfo>, ProviderError>
}
