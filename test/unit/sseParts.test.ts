import { describe, expect } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { sseParts } from "../../src/services/providers/openaiCompatible/stream.js"
import { itLive } from "../support/itLive.js"
import { plainStreamContext } from "../support/streamContext.js"

const context = plainStreamContext

const event = (json: object) => `data: ${JSON.stringify(json)}\n\n`
const delta = (d: object, extra: object = {}) => event({ model: "m/x-served", choices: [{ index: 0, delta: d }], ...extra })

/** The body's reads, as the provider's channel turns them into chunks of parts. */
const partsOf = (reads: ReadonlyArray<string>) =>
  Stream.fromChunks(...reads.map((read) => Chunk.of(new TextEncoder().encode(read)))).pipe(
    Stream.rechunk(1),
    Stream.pipeThroughChannel(sseParts(context)),
    Stream.chunks,
    Stream.runCollect,
    Effect.map((chunks) => Chunk.toReadonlyArray(chunks).map(Chunk.toReadonlyArray))
  )

describe("the OpenAI-compatible SSE splitter as a channel: reads in, parts out", () => {
  itLive.effect(
    "gives one chunk of parts per read, the tokens of a read in one delta, and the last parts at [DONE]",
    () =>
      Effect.gen(function*() {
        const chunks = yield* partsOf([
          delta({ role: "assistant", content: "Hel", reasoning: "thinking" }) + delta({ content: "lo" }),
          delta({ content: " world", reasoning: null }),
          event({ model: "m/x-served", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
          event({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } }) + "data: [DONE]\n\n"
        ])
        expect(chunks).toEqual([
          [{ _tag: "ReasoningDelta", text: "thinking" }, { _tag: "TextDelta", text: "Hello" }],
          [{ _tag: "TextDelta", text: " world" }],
          [
            { _tag: "Usage", usage: { promptTokens: 3, completionTokens: 2 } },
            { _tag: "Finish", reason: "stop", servedBy: "m/x-served" }
          ]
        ])
      })
  )

  itLive.effect("fails after the parts before an error event, with its typed error", () =>
    Effect.gen(function*() {
      const error = yield* partsOf([
        delta({ content: "Half" }),
        event({ error: { code: 502, message: "upstream died" } })
      ]).pipe(Effect.flip)
      expect(error._tag).toBe("ErrorInBody")
    }))
})
