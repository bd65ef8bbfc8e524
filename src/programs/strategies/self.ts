import { Array as Arr, Schema } from "effect"
import { plural } from "../../domain/format.js"
import { noSteps, plain, type Strategy, strategyRecord, unchanged } from "./strategy.js"

/** `self`'s record: the one model sampled, and how many times. */
export const SelfRecord = strategyRecord("self", "one model sampled", {
  model: Schema.optional(Schema.String),
  samples: Schema.optional(Schema.Number)
})

/**
 * `self`: one model (the first given or configured) asked `samples` times, each a sample at the configured
 * temperature; the samples are then synthesized like any candidates' answers.
 */
export const self: Strategy<typeof SelfRecord.Type> = {
  ...plain,
  name: "self",
  Record: SelfRecord,
  plan: ({ models, settings }) => ({
    candidates: Arr.isNonEmptyReadonlyArray(models) ? Array.from({ length: settings.samples }, () => models[0]) : models,
    steps: noSteps
  }),
  samples: true,
  // More samples than one run may have answers: refused before any call, naming both settings.
  refusal: (_plan, { maxModels, samples }) =>
    samples > maxModels ? `--samples ${samples}: more answers than the ${maxModels} one run may have (--max-models)` : undefined,
  // Models named for the run (an MCP call's `models`, the CLI's `-m`) beyond the first are said not to be asked, not dropped silently.
  warning: (named) =>
    named !== undefined && named.length > 1 ? `strategy self samples ${named[0]} only: ${named.slice(1).join(", ")} not asked` : undefined,
  record: ({ candidates: [model, ...more] }) => ({
    name: "self",
    ...(model !== undefined ? { model } : {}),
    samples: more.length + (model !== undefined ? 1 : 0)
  }),
  aggregate: unchanged,
  // The model sampled and how often are its candidates, compared as the run's models; the fingerprint names them too.
  fingerprint: (plan, settings) => ({ sampled: plan.candidates[0], samples: settings.samples }),
  steps: ({ samples = 0 }) => ({ done: samples, of: samples, text: plural(samples, "sample") })
}
