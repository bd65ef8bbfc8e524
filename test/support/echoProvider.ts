import { Chunk, Effect, Stream } from "effect"
import type { ModelPart, ModelProvider } from "../../src/domain/modelCall.js"

/**
 * The worked example of docs/extending.md ("A provider"), kept as a test fixture. A provider in one file:
 * every model answers with the last message it was sent, a word per chunk of parts, then how many words it counted
 * and who "served" it. No network, no key.
 */
export const echo: Effect.Effect<ModelProvider> = Effect.succeed({
  stream: (request) => {
    const last = request.messages.at(-1)?.content
    const text = typeof last === "string" ? last : "(a message in parts)"
    const words = text.split(/(?<=\s)/)
    // A chunk of parts per word, as a network read would bring them.
    return Stream.fromChunks(
      ...words.map((word) => Chunk.of<ModelPart>({ _tag: "TextDelta", text: word })),
      Chunk.fromIterable<ModelPart>([
        { _tag: "Usage", usage: { promptTokens: words.length, completionTokens: words.length } },
        { _tag: "Finish", reason: "stop", servedBy: `echo:${request.model}` }
      ])
    )
  },
  listModels: () => Effect.succeed([{ id: "echo/any", name: "Echo" }])
})
