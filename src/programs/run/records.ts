import { httpStatusOf, type ProviderError } from "../../domain/errors.js"
import type { ErrorInfo, Usage } from "../../domain/manifest.js"
import type { Citation } from "../../domain/modelOptions.js"
import { stripControl } from "../../domain/text.js"
import type { Completion } from "../../services/OpenRouterClient.js"

// What a manifest records of a model call, candidate or synthesis alike.

/** A provider's error as the manifest keeps it: its text cleaned, since it came from outside. */
export const errorInfo = (error: ProviderError): ErrorInfo => {
  const httpStatus = httpStatusOf(error)
  return { tag: error._tag, message: stripControl(error.message), ...(httpStatus !== undefined ? { httpStatus } : {}) }
}

/** A call record's `usage`: absent when the server reported none (unknown is not 0 tokens). */
export const usageField = ({ usage }: Completion): { readonly usage?: Usage } =>
  usage === undefined ? {} : {
    usage: {
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      ...(usage.cost !== undefined ? { cost: usage.cost } : {}),
      ...(usage.reasoningTokens !== undefined ? { reasoningTokens: usage.reasoningTokens } : {}),
      ...(usage.cachedTokens !== undefined ? { cachedTokens: usage.cachedTokens } : {})
    }
  }

/** A candidate record's `citations`: the pages the answer cited, when it cited any (already cleaned). */
export const citationsField = ({ citations }: Completion): { readonly citations?: ReadonlyArray<Citation> } =>
  citations === undefined || citations.length === 0 ? {} : { citations }
