import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { describe, expect } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { Readable } from "node:stream"
import { readableReads } from "../../src/services/providers/openaiCompatible/readable.js"
import { bodyParts } from "../../src/services/providers/openaiCompatible/stream.js"
import { itLive } from "../support/itLive.js"
import { plainStreamContext } from "../support/streamContext.js"

// The SSE splitter reading a Node `Readable` itself (readable.ts): what undici's body may be by the time it is read.

const context = plainStreamContext

const request = HttpClientRequest.post("http://127.0.0.1/chat/completions")
const response = HttpClientResponse.fromWeb(request, new Response(""))
const onError = (cause: unknown) => new HttpClientError.ResponseError({ request, response, reason: "Decode", cause })

const partsOf = (body: Readable) =>
  Stream.fromChannel(bodyParts(context, readableReads(body, onError))).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))

const sse = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\ndata: [DONE]\n\n`

describe("the SSE splitter over a Readable", () => {
  itLive.effect("reads a body pushed in pieces, then its end", () =>
    Effect.gen(function*() {
      const body = new Readable({ read() {} })
      const text = sse("read in pieces")
      setTimeout(() => {
        body.push(text.slice(0, 20))
        setTimeout(() => {
          body.push(text.slice(20))
          body.push(null)
        }, 5)
      }, 5)
      const parts = yield* partsOf(body)
      expect(parts.filter((p) => p._tag === "TextDelta").map((p) => p._tag === "TextDelta" && p.text).join("")).toBe("read in pieces")
      expect(parts.at(-1)).toMatchObject({ _tag: "Finish" })
    }))

  itLive.effect(
    "a body that failed before it is read: its failure at once, not a wait for events already sent",
    () =>
      Effect.gen(function*() {
        const body = new Readable({ read() {} })
        body.on("error", () => {})
        body.destroy(new Error("socket hang up"))
        // The error event has gone out before the reader listens.
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        const error = yield* Effect.flip(partsOf(body))
        expect(error._tag).toBe("NetworkError")
        expect(error.message).toContain("socket hang up")
      })
  )
})
