import { httpStatusOf, type ProviderError } from "../../domain/errors.js"
import type { ErrorInfo, Usage } from "../../domain/manifest.js"
import type { Completion } from "../../domain/modelCall.js"
import type { Citation } from "../../domain/modelOptions.js"
import { stripControl } from "../../domain/text.js"
import { addBilled, type BilledUsage } from "../answerFold.js"
import type { ModelCall } from "../callModel.js"

// What a manifest records of a model call, candidate or synthesis alike.

/** A provider's error as the manifest keeps it: its text cleaned, since it came from outside. */
export const errorInfo = (error: ProviderError): ErrorInfo => {
  const httpStatus = httpStatusOf(error)
  return { tag: error._tag, message: stripControl(error.message), ...(httpStatus !== undefined ? { httpStatus } : {}) }
}

/** A usage as the manifest keeps it. */
const usageRecord = (usage: BilledUsage): Usage => ({
  promptTokens: usage.promptTokens,
  completionTokens: usage.completionTokens,
  ...(usage.cost !== undefined ? { cost: usage.cost } : {}),
  ...(usage.reasoningTokens !== undefined ? { reasoningTokens: usage.reasoningTokens } : {}),
  ...(usage.cachedTokens !== undefined ? { cachedTokens: usage.cachedTokens } : {}),
  ...(usage.costDetails !== undefined ? { costDetails: usage.costDetails } : {}),
  ...(usage.estimated === true ? { estimated: true } : {}),
  ...(usage.source !== undefined ? { source: usage.source } : {})
})

/** A call record's `usage`: absent when the server reported none (unknown is not 0 tokens). */
export const usageField = ({ usage }: Completion): { readonly usage?: Usage } => usage === undefined ? {} : { usage: usageRecord(usage) }

/**
 * What a call that gave no answer was billed (its attempts' usage, reported or estimated): a failed or cut call
 * is paid for too. Absent when nothing was billed (an HTTP error before any answer).
 */
export const spentField = (spent: BilledUsage | undefined): { readonly usage?: Usage } =>
  spent === undefined ? {} : { usage: usageRecord(spent) }

/** A call record's `cache` and `cacheAgeSeconds`: what the response cache did, when it was asked. */
export const cacheField = ({ cache }: Completion): { readonly cache?: "hit" | "miss"; readonly cacheAgeSeconds?: number } =>
  cache === undefined
    ? {}
    : { cache: cache.status, ...(cache.ageSeconds !== undefined ? { cacheAgeSeconds: cache.ageSeconds } : {}) }

/** A candidate record's `citations`: the pages the answer cited, when it cited any (already cleaned). */
export const citationsField = ({ citations }: Completion): { readonly citations?: ReadonlyArray<Citation> } =>
  citations === undefined || citations.length === 0 ? {} : { citations }

/** The record of a call that answered: the fields candidates, strategy steps and the synthesis share. */
export const answeredRecord = (model: string, call: ModelCall, completion: Completion) => ({
  model,
  servedBy: stripControl(completion.servedBy),
  status: "ok" as const,
  latencyMs: call.latencyMs,
  attempts: call.attempts,
  // Attempts that failed before this one were billed too; an answer without usage stays unknown.
  ...(completion.usage === undefined ? {} : spentField(addBilled(completion.usage, call.spent))),
  ...cacheField(completion),
  ...(completion.finishReason !== undefined ? { finishReason: stripControl(completion.finishReason) } : {})
})

/** The record of a call that failed, after its retries: a timeout or an error, with why. */
export const failedRecord = (model: string, call: ModelCall, error: ProviderError) => ({
  model,
  status: error._tag === "Timeout" ? "timeout" as const : "error" as const,
  latencyMs: call.latencyMs,
  attempts: call.attempts,
  ...spentField(call.spent),
  error: errorInfo(error)
})
