import { askNamed, plain, type Strategy, strategyRecord, unchanged } from "./strategy.js"

/** `synthesize`'s record: nothing of its own. */
export const SynthesizeRecord = strategyRecord("synthesize", "merged", {})

/** `synthesize` (the default): the synthesizer merges the candidates' answers, with no step before it. */
export const synthesize: Strategy<typeof SynthesizeRecord.Type> = {
  ...plain,
  name: "synthesize",
  Record: SynthesizeRecord,
  plan: askNamed,
  record: () => ({ name: "synthesize" }),
  aggregate: unchanged
}
