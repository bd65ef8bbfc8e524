import { Either } from "effect"
import {
  BadRequest,
  ErrorInBody,
  Forbidden,
  InvalidResponse,
  isTransientStatus,
  OutOfCredits,
  type ProviderError,
  ProviderFailure,
  RateLimited,
  Unauthorized
} from "../../../domain/errors.js"
import type { CacheOutcome, Completion, CostDetails, TokenUsage } from "../../../domain/modelCall.js"
import type { Redact } from "../../../domain/redact.js"
import { annotationList, citationsOf } from "./citations.js"
import { decodeChat, decodeErrorBody, type ErrorObject, type Undecodable, type WireUsage } from "./wire.js"

/** A listed per-token price as a number, when it is one: text is read, and what is not a number is no price. */
const listedPrice = (price: number | string | null | undefined): number | undefined => {
  const n = typeof price === "string" ? (price.trim() === "" ? Number.NaN : Number(price)) : price
  return n == null || !Number.isFinite(n) ? undefined : n
}

/**
 * A listed per-token price in USD per million tokens. Negative (`"-1"`, a variable-price router) or not a number
 * counts as unpriced, as a missing one does: `--max-cost` then refuses to bound the run rather than count it negative.
 */
export const perMillion = (price: number | string | null | undefined): number | undefined => {
  const n = listedPrice(price)
  return n === undefined || n < 0 ? undefined : n * 1_000_000
}

/** Whether a listed price says the model's price varies (a negative price). */
export const isVariable = (price: number | string | null | undefined): boolean => (listedPrice(price) ?? 0) < 0

/** Retry-After is either delta-seconds or an HTTP date. */
export const parseRetryAfter = (value: string | undefined, now: number = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000))
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

export const snippet = (text: string, max = 200): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

const looksLikeHtml = (contentType: string | undefined, text: string): boolean =>
  (contentType ?? "").includes("text/html") || /^\s*<(!doctype|html|head|body)/i.test(text)

/** A numeric or textual error code that says "try again later". */
const isTransientCode = (code: number | string | null | undefined): boolean => {
  if (typeof code === "number") return isTransientStatus(code)
  if (typeof code === "string") {
    const n = Number(code)
    if (Number.isFinite(n)) return isTransientStatus(n)
    return /timeout|timed.?out|rate|overload|unavailable|server_error|internal|capacity|busy/i.test(code)
  }
  return false
}

const isRateLimitCode = (code: number | string | null | undefined): boolean => code === 429 || code === "429"

const costDetailsOf = (details: NonNullable<WireUsage["cost_details"]>): CostDetails | undefined => {
  const picked: CostDetails = {
    ...(details.upstream_inference_cost != null ? { upstreamInferenceCost: details.upstream_inference_cost } : {}),
    ...(details.upstream_inference_prompt_cost != null ? { upstreamPromptCost: details.upstream_inference_prompt_cost } : {}),
    ...(details.upstream_inference_completions_cost != null
      ? { upstreamCompletionCost: details.upstream_inference_completions_cost }
      : {})
  }
  return Object.keys(picked).length > 0 ? picked : undefined
}

/**
 * The server's usage, or none when it reported no token counts (a count it left out is 0). A response-cache
 * hit costs nothing, whatever the usage says: its tokens are kept as reported.
 */
export const usageOf = (usage: WireUsage | null | undefined, cache?: CacheOutcome): TokenUsage | undefined => {
  if (usage == null || (usage.prompt_tokens == null && usage.completion_tokens == null)) return undefined
  const details = usage.cost_details == null ? undefined : costDetailsOf(usage.cost_details)
  const cost = cache?.status === "hit" ? 0 : usage.cost
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    ...(cost != null ? { cost } : {}),
    ...(usage.completion_tokens_details?.reasoning_tokens != null
      ? { reasoningTokens: usage.completion_tokens_details.reasoning_tokens }
      : {}),
    ...(usage.prompt_tokens_details?.cached_tokens != null ? { cachedTokens: usage.prompt_tokens_details.cached_tokens } : {}),
    ...(details !== undefined ? { costDetails: details } : {})
  }
}

/** What OpenRouter's response cache did, from the response's headers; none when it said nothing. */
export const cacheOutcomeOf = (headers: Readonly<Record<string, string | undefined>>): CacheOutcome | undefined => {
  const status = headers["x-openrouter-cache-status"]?.trim().toUpperCase()
  if (status !== "HIT" && status !== "MISS") return undefined
  const age = Number(headers["x-openrouter-cache-age"])
  const hasAge = headers["x-openrouter-cache-age"] !== undefined && Number.isFinite(age) && age >= 0
  return { status: status === "HIT" ? "hit" : "miss", ...(hasAge ? { ageSeconds: age } : {}) }
}

/**
 * An error the provider reported inside an answer: a 200 body, a choice, or a stream event. A 429 is
 * typed as a rate limit wherever it arrives, with the same tag and status as an HTTP 429.
 */
export const providerErrorOf = (
  model: string,
  error: ErrorObject | null | undefined,
  where: string,
  redact: Redact,
  options: { readonly transientWithoutCode: boolean }
): RateLimited | ErrorInBody => {
  const code = error?.code ?? undefined
  const text = redact(error?.message ?? "finish_reason error")
  const message = `Provider error ${where}: ${text}${code !== undefined ? ` (code ${code})` : ""}`
  if (isRateLimitCode(code)) return new RateLimited({ model, message, httpStatus: 429 })
  const transient = code === undefined ? options.transientWithoutCode : isTransientCode(code)
  return new ErrorInBody({ model, code, message, transient })
}

/** Maps an HTTP error status (with its body) to the typed error a caller can act on. */
export const errorForStatus = (
  model: string,
  status: number,
  headers: Readonly<Record<string, string | undefined>>,
  text: string,
  redact: Redact
): ProviderError => {
  const providerMessage = Either.match(decodeErrorBody(text), {
    onLeft: () => (looksLikeHtml(headers["content-type"], text)
      ? "an HTML error page (a proxy or gateway answered)"
      : snippet(redact(text)) || "no body"),
    onRight: (b) => (b.error.message != null ? redact(b.error.message) : `error code ${String(b.error.code)}`)
  })
  const message = `HTTP ${status}: ${providerMessage}`
  const retryAfterMs = parseRetryAfter(headers["retry-after"])
  if (status === 429) return new RateLimited({ model, message, httpStatus: status, retryAfterMs })
  if (status === 401) return new Unauthorized({ model, message: `${message} (check OPENROUTER_API_KEY)`, httpStatus: status })
  if (status === 402) return new OutOfCredits({ model, message: `${message} (add credits to the OpenRouter account)`, httpStatus: status })
  if (status === 403) return new Forbidden({ model, message, httpStatus: status })
  if (isTransientStatus(status)) return new ProviderFailure({ model, message, httpStatus: status, retryAfterMs })
  return new BadRequest({ model, message, httpStatus: status })
}

/** One short line on why a 2xx body is not a chat completion. */
export const describeUndecodable = (reason: Undecodable, contentType: string | undefined, text: string): string =>
  looksLikeHtml(contentType, text)
    ? "an HTML page instead of JSON (a proxy or gateway answered)"
    : text.trim() === ""
    ? "an empty body"
    : reason._tag === "NotJson"
    ? "a body that is not a chat completion (not JSON, or cut short)"
    : `a body that is not a chat completion (wrong shape at ${reason.path})`

const invalid = (model: string, status: number, what: string) =>
  new InvalidResponse({ model, message: `Invalid response: ${what}`, httpStatus: status })

/** The usage a 2xx body that is no answer (empty, an error) still reports: such a reply may be billed. */
export const billedUsageOf = (text: string): TokenUsage | undefined =>
  Either.match(decodeChat(text), { onLeft: () => undefined, onRight: (body) => usageOf(body.usage) })

/** Turns a 2xx body into a Completion, or the precise reason it cannot be one. */
export const interpretChatBody = (
  model: string,
  status: number,
  contentType: string | undefined,
  text: string,
  redact: Redact,
  cache?: CacheOutcome
): Either.Either<Completion, ProviderError> => {
  const decoded = decodeChat(text)
  if (Either.isLeft(decoded)) return Either.left(invalid(model, status, describeUndecodable(decoded.left, contentType, text)))
  const body = decoded.right
  if (body.error) return Either.left(providerErrorOf(model, body.error, `in a ${status} body`, redact, { transientWithoutCode: false }))
  const choice = body.choices?.[0]
  if (!choice) return Either.left(invalid(model, status, "no choices"))
  if (choice.error || choice.finish_reason === "error") {
    return Either.left(providerErrorOf(model, choice.error, "in the answer", redact, { transientWithoutCode: true }))
  }
  const content = choice.message?.content
  if (content == null) return Either.left(invalid(model, status, "content is null"))
  if (content.trim() === "") return Either.left(invalid(model, status, "content is empty"))
  return Either.right({
    content: redact(content),
    servedBy: body.model != null ? redact(body.model) : model,
    usage: usageOf(body.usage, cache),
    finishReason: choice.finish_reason ?? undefined,
    citations: citationsOf(annotationList(choice.message?.annotations), redact),
    ...(cache !== undefined ? { cache } : {})
  })
}
