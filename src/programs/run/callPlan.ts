import { Option } from "effect"
import type { ModelRequest, WebSearch } from "../../domain/modelCall.js"
import type { SentOptions } from "../../domain/modelOptions.js"
import type { SettingsValue } from "../../settings/values.js"

import type { AttachmentPlan } from "../attachments/plan.js"
import { userMessageOf } from "../attachments/plan.js"
import { type Thread, threadMessages } from "../thread/turns.js"

/** What one candidate's call sends: messages and sampling options. */
export type CandidateCall = ModelRequest

/** What a run knows when it plans its candidates' calls. */
export interface CallPlanInput {
  readonly prompt: string
  /** The run's attached files, and which models read images. */
  readonly attachments?: AttachmentPlan | undefined
  /** A follow-up: the earlier turns, sent before the prompt. */
  readonly thread?: Thread | undefined
}

/** The settings a model's options are drawn from. */
export type OptionSettings = Pick<
  SettingsValue,
  | "temperature"
  | "maxTokens"
  | "modelOptions"
  | "reasoning"
  | "webMaxResults"
  | "webMaxUses"
  | "webEngine"
  | "webDomains"
  | "webExcludeDomains"
>

/** The options of a call besides its model and messages. */
export type ModelCallOptions = Pick<ModelRequest, "temperature" | "maxTokens" | "reasoning" | "provider" | "fallbacks" | "web">

/** Web search's limits from the settings: only those set (the rest is the provider's default). */
const webSearchOf = (settings: OptionSettings): WebSearch => {
  const set = <K extends keyof WebSearch>(key: K, value: Option.Option<NonNullable<WebSearch[K]>>) =>
    Option.match(value, { onNone: () => ({}), onSome: (v) => ({ [key]: v }) })
  return {
    ...set("engine", settings.webEngine),
    ...set("maxResults", settings.webMaxResults),
    ...set("maxUses", settings.webMaxUses),
    ...set("allowedDomains", settings.webDomains),
    ...set("excludedDomains", settings.webExcludeDomains)
  }
}

/**
 * The options one model is sent. A model's own temperature and max tokens (a model object in the config
 * file) win over the run's, which always have a value; the run's reasoning effort, unset unless chosen,
 * wins over the model's own.
 */
export const modelCallOptions = (settings: OptionSettings, model: string, web: boolean): ModelCallOptions => {
  const own = settings.modelOptions[model] ?? {}
  const maxTokens = own.maxTokens ?? Option.getOrUndefined(settings.maxTokens)
  const effort = Option.getOrUndefined(settings.reasoning) ?? own.reasoning?.effort
  return {
    temperature: own.temperature ?? settings.temperature,
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(effort !== undefined ? { reasoning: { effort } } : {}),
    ...(own.provider !== undefined ? { provider: own.provider } : {}),
    ...(own.fallbacks !== undefined && own.fallbacks.length > 0 ? { fallbacks: own.fallbacks } : {}),
    ...(web ? { web: webSearchOf(settings) } : {})
  }
}

/** A call's options as its manifest record keeps them (`options`). */
export const sentOptions = (call: ModelCallOptions): SentOptions => ({
  ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
  ...(call.maxTokens !== undefined ? { maxTokens: call.maxTokens } : {}),
  ...(call.reasoning !== undefined ? { reasoning: call.reasoning } : {}),
  ...(call.provider !== undefined ? { provider: call.provider } : {}),
  ...(call.fallbacks !== undefined ? { fallbacks: call.fallbacks } : {}),
  ...(call.web !== undefined ? { web: true } : {}),
  ...(call.web !== undefined && Object.keys(call.web).length > 0 ? { webSearch: call.web } : {})
})

/**
 * The request each candidate model is sent: the one place where a run's inputs (prompt, and later
 * attachments, an earlier conversation, per-model options) become the messages and options of a call.
 */
export const candidateCall = (
  input: CallPlanInput,
  settings: OptionSettings & Pick<SettingsValue, "web">,
  model: string
): CandidateCall => ({
  model,
  messages: [
    ...threadMessages(input.thread, model),
    userMessageOf(input.prompt, input.attachments?.files ?? [], input.attachments?.seesImages(model) ?? false)
  ],
  ...modelCallOptions(settings, model, settings.web)
})
