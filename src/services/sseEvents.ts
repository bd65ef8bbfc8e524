import * as Sse from "@effect/experimental/Sse"

/**
 * An incremental server-sent-events decoder: bytes in, whole events out, synchronously. The events are
 * parsed by `@effect/experimental/Sse`'s parser; what this adds is for speed (see README, Performance):
 *
 * - the parser is fed whole lines: it rescans its buffer from the start for each line it finds, so a
 *   piece holding many events costs quadratic time (a 20 KB burst of 100 events: 22 ms in one piece,
 *   2 ms line by line);
 * - no stream stages, mailbox or fiber hand-offs per piece: the caller folds each network chunk in one
 *   go (an HTTP call with 25 events cost ~1.5 ms of CPU through `Sse.makeChannel`, most of it there).
 *
 * `retry:` fields are ignored (a chat completion is not reconnected).
 */
export interface SseDecoder {
  /** The events completed by these bytes; `undefined` when an event grew past `maxEventChars`. */
  readonly push: (bytes: Uint8Array) => ReadonlyArray<Sse.Event> | undefined
  /** The events completed by the end of the stream (text held back for a line end that never came). */
  readonly end: () => ReadonlyArray<Sse.Event> | undefined
}

export const makeSseDecoder = (options: { readonly maxEventChars: number }): SseDecoder => {
  const decoder = new TextDecoder()
  let events: Array<Sse.Event> = []
  const parser = Sse.makeParser((event) => {
    if (event._tag === "Event") events.push(event)
  }, { maxEventSize: options.maxEventChars })
  /** Text after the last line feed seen. */
  let partial = ""
  let failed = false

  const feed = (text: string, final: boolean): ReadonlyArray<Sse.Event> | undefined => {
    if (failed) return undefined
    const buffer = partial === "" ? text : partial + text
    let start = 0
    for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n", start)) {
      if (parser.feed(buffer.slice(start, end + 1)) !== undefined) failed = true
      start = end + 1
    }
    partial = start === 0 ? buffer : buffer.slice(start)
    if (final && partial !== "") {
      if (parser.feed(partial) !== undefined) failed = true
      partial = ""
    }
    if (partial.length > options.maxEventChars) failed = true
    if (failed) return undefined
    const out = events
    events = []
    return out
  }

  return {
    push: (bytes) => feed(decoder.decode(bytes, { stream: true }), false),
    end: () => feed(decoder.decode(), true)
  }
}
