import { Schema } from "effect"
import { ModelArgument, modelId, modelList, optionalModelList, presetName, url } from "../kinds.js"
import { optional, perCall, type Topic, withDefault } from "../setting.js"

export const DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"

/**
 * Five strong models from five different labs: diversity is what makes a synthesis worth more than one answer.
 * OpenRouter's `~vendor/family-latest` slugs, so that the panel follows each family's newest model instead of
 * going stale; DeepSeek has no such slug for its largest family, so its id is exact (November 2026).
 * `parallel-llm models` shows what each slug resolves to; a run's manifest records who answered (`servedBy`).
 */
export const DEFAULT_MODELS: ReadonlyArray<string> = [
  "~openai/gpt-latest",
  "~anthropic/claude-opus-latest",
  "~google/gemini-pro-latest",
  "~x-ai/grok-latest",
  "deepseek/deepseek-v4-pro"
]

/** Long context (1M tokens) so that five long candidates fit. */
export const DEFAULT_SYNTHESIZER = "~google/gemini-pro-latest"

/** Tried in order when the synthesizer fails: a different lab, so one provider's outage cannot take both. */
export const DEFAULT_FALLBACK_SYNTHESIZERS: ReadonlyArray<string> = ["~anthropic/claude-sonnet-latest"]

/** Where the models are, and which ones: the provider, the candidates and the synthesizers. */
export const modelTopic: Topic = { title: "Model", commands: ["ask", "batch", "serve", "models", "resynth", "eval"] }

export const modelSettings = {
  baseUrl: withDefault({
    field: "baseUrl",
    kind: url,
    flag: "base-url",
    env: "OPENROUTER_BASE_URL",
    doc: "OpenAI-compatible API base URL",
    default: DEFAULT_BASE_URL,
    defaultDoc: "`https://openrouter.ai/api/v1`",
    convert: (u: string) => u.replace(/\/+$/, "")
  }),
  models: perCall(
    withDefault({
      field: "models",
      preset: true,
      kind: modelList,
      flag: "model",
      alias: "m",
      env: "PARALLEL_LLM_MODELS",
      doc: "Candidate models",
      // A re-synthesis asks no candidate: it has the run's answers.
      commands: ["ask", "batch", "serve", "models", "eval"],
      default: DEFAULT_MODELS,
      defaultDoc: DEFAULT_MODELS.map((m) => `\`${m}\``).join(", ")
    }),
    {
      description: "Candidate model ids.",
      // The upper bound is the server's `maxModels`, checked with the rest of the run before any call.
      schema: Schema.Array(ModelArgument).pipe(Schema.minItems(1))
    }
  ),
  synthesizer: perCall(
    withDefault({
      field: "synthesizer",
      preset: true,
      kind: modelId,
      flag: "synthesizer",
      alias: "s",
      env: "PARALLEL_LLM_SYNTHESIZER",
      doc: "The model that merges the answers",
      default: DEFAULT_SYNTHESIZER,
      defaultDoc: `\`${DEFAULT_SYNTHESIZER}\` (1M-token context)`
    }),
    { schema: ModelArgument }
  ),
  fallbackSynthesizers: withDefault({
    field: "fallbackSynthesizers",
    preset: true,
    kind: optionalModelList,
    flag: "fallback-synthesizer",
    env: "PARALLEL_LLM_FALLBACK_SYNTHESIZERS",
    doc: "Fallback synthesizers, tried in order when the one before fails (`none` for none)",
    default: DEFAULT_FALLBACK_SYNTHESIZERS,
    defaultDoc: `${
      DEFAULT_FALLBACK_SYNTHESIZERS.map((m) => `\`${m}\``).join(", ")
    } on OpenRouter; none on any other server, nor for a panel of CLI agents only`
  }),
  preset: perCall(
    optional({
      field: "preset",
      kind: presetName,
      flag: "preset",
      env: "PARALLEL_LLM_PRESET",
      doc: "A named panel from the config file's `presets`: its values beat the file's own, flags and environment beat it",
      defaultDoc: "none"
    }),
    { description: "A preset from list_models; arguments beat it." }
  )
}
