import { Array as Arr, Effect } from "effect"
import { updateStrategy } from "./panel.js"
import { askNamed, plain, type Strategy } from "./strategy.js"

/** The text an answer says, spacing and case aside. */
const gist = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim()

/** `dedupe`: answers that say the same as an earlier one are synthesized once; the manifest names the models left out. */
export const dedupe: Strategy<"dedupe"> = {
  ...plain,
  name: "dedupe",
  plan: askNamed,
  record: () => ({ name: "dedupe" }),
  aggregate: (started, answered) => {
    const kept = Arr.dedupeWith(answered, (a, b) => gist(a.content) === gist(b.content))
    const dropped = answered.filter((a) => !kept.includes(a)).map((a) => a.model)
    return Effect.as(updateStrategy(started, "dedupe", (r) => ({ ...r, dropped })), { answers: kept, ranking: undefined })
  }
}
