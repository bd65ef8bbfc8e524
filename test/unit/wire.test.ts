import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeStreamChunk, decodeStreamChunkBySchema } from "../../src/services/providers/openaiCompatible/wire.js"

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
  // The last chunk of an answer: its finish reason, with an empty delta or an empty text.
  `{"id":"g","model":"m/x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
  `{"id":"g","model":"m/x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"length","native_finish_reason":"length","logprobs":null}]}`,
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
  `{"choices":[{"delta":{"content":"cut`,
  // Fields the everyday check does not know: the Schema decides, whatever it comes to read.
  `{"id":"g","provider":"P","model":"m/x","object":"chat.completion.chunk","created":1,"system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"w"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
  `{"choices":[{"delta":{"content":"w","annotations":[{"type":"url_citation","url_citation":{"url":"https://a.example","title":"A"}}]}}]}`,
  `{"choices":[{"delta":{"content":"w","annotations":"bad"}}]}`,
  `{"choices":[{"delta":{"content":"w","reasoning":null}}]}`,
  `{"choices":[{"delta":{"content":"","reasoning":"thinking"}}]}`,
  `{"choices":[{"delta":{"content":null,"tool_calls":[{"index":0,"id":"t","function":{"name":"f","arguments":"{}"}}]}}]}`,
  `{"choices":[{"delta":{"content":"w"}}],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}`,
  `{"choices":[{"delta":{"content":"w"}}],"usage":null}`,
  `{"choices":[{"delta":{"content":"w"}}],"error":null}`,
  `{"choices":[{"delta":{"content":"w"},"error":{"message":null}}]}`,
  `{"choices":[{"delta":{"content":"w"}}],"error":{"code":"x","metadata":{"raw":"upstream"}}}`,
  `{"choices":[{"delta":{"content":"w"},"extra":1}]}`,
  `{"choices":[{"delta":{"content":"w"}}],"extra":{"nested":true}}`,
  `{"choices":[{"delta":{}}]}`,
  `{"choices":[{}]}`,
  `{}`
]

/** Chunks the everyday check must hand to the Schema: what the Schema makes of them is the answer. */
const notEveryday = chunks.filter((c) => /annotations|reasoning|tool_calls|usage|error|extra|\[\{\}\]|^\{\}$/.test(c))

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

  it("hands every chunk with a field beyond the everyday ones to the Schema", () => {
    expect(notEveryday.length).toBeGreaterThan(15)
    for (const chunk of notEveryday) expect(decodeStreamChunk(chunk), chunk).toEqual(decodeStreamChunkBySchema(chunk))
  })

  it("takes the last chunk of an answer (its finish reason, an empty delta) as parsed, without the Schema", () => {
    const last = `{"id":"g","model":"m/x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
    expect(Either.getOrThrow(decodeStreamChunk(last))).toEqual(JSON.parse(last))
    expect(decodeStreamChunk(last)).not.toEqual(decodeStreamChunkBySchema(last))
  })

  it("takes the everyday chunk as parsed, without the Schema", () => {
    // The Schema drops the fields it does not declare (id, index, role); the everyday path keeps the parsed JSON.
    const everyday = chunks[0]!
    expect(decodeStreamChunk(everyday)).not.toEqual(decodeStreamChunkBySchema(everyday))
    expect(Either.getOrThrow(decodeStreamChunk(everyday))).toEqual(JSON.parse(everyday))
  })
})
