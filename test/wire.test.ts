import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeStreamChunk, decodeStreamChunkBySchema } from "../src/services/openrouter/wire.js"

// The everyday delta chunk skips the Schema: both paths must accept and refuse the same chunks and read
// the same fields from them.
const chunks = [
  `{"id":"g","model":"m/x","choices":[{"index":0,"delta":{"role":"assistant","content":"word"},"finish_reason":null}]}`,
  `{"choices":[{"delta":{"content":""}}]}`,
  `{"model":null,"choices":[{"delta":{"content":"a"}}]}`,
  `{"model":7,"choices":[{"delta":{"content":"a"}}]}`,
  `{"choices":[{"delta":{"content":5}}]}`,
  `{"choices":[{"delta":{"content":null}}]}`,
  `{"choices":[{"delta":null}]}`,
  `{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`,
  `{"choices":[{"delta":{"content":"a"},"finish_reason":7}]}`,
  `{"choices":[{"delta":{"content":"a"},"error":{"code":429,"message":"slow"}}]}`,
  `{"choices":[{"delta":{"content":"a"},"error":"boom"}]}`,
  `{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
  `{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"cost":0.1}}`,
  `{"choices":[{"delta":{"content":"a"}}],"usage":"lots"}`,
  `{"error":{"code":502,"message":"down"}}`,
  `{"choices":"none"}`,
  `[{"choices":[]}]`,
  `"text"`,
  `{"choices":[{"delta":{"content":"cut`
]

describe("decodeStreamChunk", () => {
  it("agrees with the Schema on every chunk, everyday or not", () => {
    for (const chunk of chunks) {
      const fast = decodeStreamChunk(chunk)
      const schema = decodeStreamChunkBySchema(chunk)
      expect(Either.isRight(fast), chunk).toBe(Either.isRight(schema))
      if (Either.isRight(fast) && Either.isRight(schema)) {
        const read = (c: typeof fast.right) => ({
          model: c.model,
          delta: c.choices?.[0]?.delta?.content,
          finish: c.choices?.[0]?.finish_reason,
          error: c.error ?? c.choices?.[0]?.error,
          usage: c.usage
        })
        expect(read(fast.right), chunk).toEqual(read(schema.right))
      }
    }
  })
})
