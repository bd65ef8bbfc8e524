import { Option } from "effect"
import type { CompletionRequest } from "../../services/OpenRouterClient.js"
import type { SettingsValue } from "../../services/Settings.js"
import type { AttachmentPlan } from "../attachments/plan.js"
import { userMessageOf } from "../attachments/plan.js"

/** What one candidate's call sends, besides the live-progress hook: messages and sampling options. */
export type CandidateCall = Omit<CompletionRequest, "onDelta">

/** What a run knows when it plans its candidates' calls. */
export interface CallPlanInput {
  readonly prompt: string
  /** The run's attached files, and which models read images. */
  readonly attachments?: AttachmentPlan | undefined
}

/**
 * The request each candidate model is sent: the one place where a run's inputs (prompt, and later
 * attachments, an earlier conversation, per-model options) become the messages and options of a call.
 */
export const candidateCall = (
  input: CallPlanInput,
  settings: Pick<SettingsValue, "temperature" | "maxTokens">,
  model: string
): CandidateCall => ({
  model,
  messages: [userMessageOf(input.prompt, input.attachments?.files ?? [], input.attachments?.seesImages(model) ?? false)],
  temperature: settings.temperature,
  ...Option.match(settings.maxTokens, { onNone: () => ({}), onSome: (maxTokens) => ({ maxTokens }) })
})
