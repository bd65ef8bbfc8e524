import { askNamed, plain, type Strategy, unchanged } from "./strategy.js"

/** `synthesize` (the default): the synthesizer merges the candidates' answers, with no step before it. */
export const synthesize: Strategy<"synthesize"> = {
  ...plain,
  name: "synthesize",
  plan: askNamed,
  record: () => ({ name: "synthesize" }),
  aggregate: unchanged
}
