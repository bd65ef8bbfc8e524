import type { HttpClientError } from "@effect/platform"
import { Cause, Channel, Chunk, Effect } from "effect"
import type { Readable } from "node:stream"
import type { OnRead, ReadStep } from "./stream.js"

/**
 * A body's reads, straight from its `Readable` (undici's: see body.ts's `undiciBody`), for the SSE splitter
 * (stream.ts's `bodyParts`): what the platform's `response.stream` does (reads woken by `readable`; the body
 * destroyed at the end if still open, which aborts an unfinished request), without the layers around it. The
 * platform's stream is a channel of its own inside two `ensuring`s, the outer one aborting the request at the end
 * of every body, finished or not (an `AbortError` built with its stack trace, and an event sent, per call): with the
 * pipe into the splitter, ~10 % of a streamed call's CPU (bench/README.md, the ninth session). Listens from the
 * moment it is made: make it where the channel starts.
 */
export const readableReads = (
  body: Readable,
  onError: (cause: unknown) => HttpClientError.ResponseError
): { readonly step: ReadStep<unknown, unknown>; readonly release: Effect.Effect<void> } => {
  // A wake-up that comes while no read waits is kept, so that none is lost between a read and the wait.
  let woken = false
  let waiting: ((resume: Effect.Effect<void>) => void) | undefined
  let failure: HttpClientError.ResponseError | undefined
  let ended = false
  const wake = () => {
    const resume = waiting
    waiting = undefined
    if (resume === undefined) woken = true
    else resume(Effect.void)
  }
  const onEnd = () => {
    ended = true
    wake()
  }
  const onFailure = (cause: unknown) => {
    failure = onError(cause)
    wake()
  }
  body.on("readable", wake)
  body.on("end", onEnd)
  body.on("error", onFailure)
  // A body that failed or was closed before this reader listened has sent its event already.
  if (body.errored !== null) onFailure(body.errored)
  else if (!body.readable) ended = true
  // No canceler: an interrupted wait's resume is ignored by the fiber if the body wakes it later (and a canceler
  // costs every wait an `onInterrupt`).
  const woke = Channel.fromEffect(Effect.async<void>((resume) => {
    if (woken) resume(Effect.void)
    else waiting = resume
  }))
  const step = (on: OnRead<unknown, unknown>) => {
    const loop: ReturnType<ReadStep<unknown, unknown>> = Channel.suspend(() => {
      woken = false
      const reads: Array<Uint8Array> = []
      for (let read: unknown = body.read(); read instanceof Uint8Array; read = body.read()) reads.push(read)
      if (reads.length > 0) return on.onInput(Chunk.unsafeFromArray(reads))
      if (failure !== undefined) return on.onFailure(Cause.fail(failure))
      if (ended || body.readableEnded) return on.onDone()
      return Channel.flatMap(woke, () => loop)
    })
    return loop
  }
  const release = Effect.sync(() => {
    body.off("readable", wake)
    body.off("end", onEnd)
    body.off("error", onFailure)
    if (!body.closed) body.destroy()
  })
  return { step, release }
}
