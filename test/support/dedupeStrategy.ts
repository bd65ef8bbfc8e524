import { Array as Arr, Effect, Schema } from "effect"
import { updateStrategy } from "../../src/programs/strategies/panel.js"
import { askNamed, plain, type Strategy, strategyRecord } from "../../src/programs/strategies/strategy.js"

/** Its record: `name`, its one-line description (`--strategy`'s help lists it), and its own fields. */
export const DedupeRecord = strategyRecord("dedupe", "the same answer once", {
  /** The models whose answer said what an earlier one did. */
  dropped: Schema.optional(Schema.Array(Schema.String))
})

const gist = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim()

/** `dedupe`: an answer that says what an earlier one did (spacing and case aside) is synthesized once. */
export const dedupe: Strategy<typeof DedupeRecord.Type, typeof DedupeRecord.Encoded> = {
  ...plain, // no calls, refusals or warnings of its own
  name: "dedupe",
  Record: DedupeRecord,
  plan: askNamed, // the models named, as named
  record: () => ({ name: "dedupe" }),
  aggregate: (started, answered) => {
    const kept = Arr.dedupeWith(answered, (a, b) => gist(a.content) === gist(b.content))
    const dropped = answered.filter((a) => !kept.includes(a)).map((a) => a.model)
    return Effect.as(updateStrategy(started, DedupeRecord, (r) => ({ ...r, dropped })), { answers: kept, ranking: undefined })
  },
  steps: ({ dropped = [] }) => ({ done: dropped.length, of: dropped.length, text: `${dropped.length} dropped` })
}
