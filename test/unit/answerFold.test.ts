import { describe, expect } from "@effect/vitest"
import { Channel, Chunk, Effect, Fiber, Stream, TestClock } from "effect"
import type { ProviderError } from "../../src/domain/errors.js"
import type { ModelPart } from "../../src/domain/modelCall.js"
import { foldAnswer } from "../../src/programs/answerFold.js"
import { itClock } from "../support/itClock.js"
import { itLive } from "../support/itLive.js"
import { pendingSleeps } from "../support/testClock.js"

// The fold closes the scope of its pull only when the stream did not end by itself: a stream read to its end must
// have run every finalizer in it by then (a provider's finalizers end its HTTP request), whatever its shape.

const text: ModelPart = { _tag: "TextDelta", text: "an answer" }
const finish: ModelPart = { _tag: "Finish", reason: "stop", servedBy: "m/x" }
const finishEnded: ModelPart = { ...finish, ended: true }

describe("foldAnswer: the stream's finalizers", () => {
  itLive.effect("a stream read to its end has run every finalizer in it when the fold returns", () =>
    Effect.gen(function*() {
      const ran: Array<string> = []
      const note = (name: string) => Effect.sync(() => void ran.push(name))
      // The shapes a provider's stream takes: an ensuring outermost, one piped into a channel, one in a concatenation.
      const bytes = Stream.make(Chunk.of(text)).pipe(Stream.ensuring(note("upstream")))
      const piped = Stream.pipeThroughChannel(
        bytes,
        Channel.identity<Chunk.Chunk<Chunk.Chunk<ModelPart>>, ProviderError, unknown>()
      ).pipe(Stream.flattenChunks)
      const parts = Stream.concat(piped, Stream.make(finishEnded).pipe(Stream.ensuring(note("inner")))).pipe(
        Stream.ensuring(note("outer"))
      )
      const completion = yield* foldAnswer("m/x", parts)
      expect(completion.content).toBe("an answer")
      expect([...ran].sort()).toEqual(["inner", "outer", "upstream"])
    }))

  itClock.effect("a stream still open after its Finish is closed once the read after it is given up", () =>
    Effect.gen(function*() {
      let closed = false
      const parts = Stream.concat(Stream.make(text, finish), Stream.never).pipe(Stream.ensuring(Effect.sync(() => (closed = true))))
      const fiber = yield* Effect.fork(foldAnswer("m/x", parts))
      const [bound = 0] = yield* pendingSleeps(1)
      yield* TestClock.adjust(bound)
      const completion = yield* Fiber.join(fiber)
      expect(completion.content).toBe("an answer")
      expect(closed).toBe(true)
    }))
})
