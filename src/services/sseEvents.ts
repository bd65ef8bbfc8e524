/**
 * Server-sent events, split line by line: text in, whole events out, synchronously.
 * Hand-written because `@effect/experimental` 0.61's `Sse.makeParser` is still quadratic: 1,500 events read at once took 695 ms, line by line 0.9 ms.
 *
 * Only `data:` and `event:` matter to a chat completion: `id:` and `retry:` are read past (a completion
 * is never reconnected), comments are skipped. Line ends may be LF, CRLF or CR.
 */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

export interface SseSplitter {
  /** The events completed by this text; `undefined` once an event grew past `maxEventChars`. */
  readonly push: (text: string) => ReadonlyArray<SseEvent> | undefined
  /** The events completed by the end of the stream (a last line without its line end). */
  readonly end: () => ReadonlyArray<SseEvent> | undefined
}

export const makeSseSplitter = (options: { readonly maxEventChars: number }): SseSplitter => {
  /** Text after the last line end seen (a CR at the very end waits for a possible LF). */
  let partial = ""
  let data = ""
  let hasData = false
  let eventName = "message"
  let failed = false

  const line = (text: string, out: Array<SseEvent>) => {
    if (text === "") {
      if (hasData) out.push({ event: eventName, data })
      data = ""
      hasData = false
      eventName = "message"
      return
    }
    const colon = text.indexOf(":")
    if (colon === 0) return
    const field = colon === -1 ? text : text.slice(0, colon)
    const value = colon === -1 ? "" : text.charCodeAt(colon + 1) === 32 ? text.slice(colon + 2) : text.slice(colon + 1)
    if (field === "data") {
      data = hasData ? `${data}\n${value}` : value
      hasData = true
      if (data.length > options.maxEventChars) failed = true
    } else if (field === "event") {
      eventName = value
    }
  }

  const feed = (text: string, final: boolean): ReadonlyArray<SseEvent> | undefined => {
    if (failed) return undefined
    if (text === "" && !final) return []
    let buffer = partial === "" ? text : partial + text
    if (buffer.includes("\r")) {
      // A CR at the end may be the first half of a CRLF: it waits for the next piece.
      const held = !final && buffer.endsWith("\r")
      buffer = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n") + (held ? "\r" : "")
    }
    const out: Array<SseEvent> = []
    let start = 0
    for (let end = buffer.indexOf("\n"); end !== -1; end = buffer.indexOf("\n", start)) {
      line(buffer.slice(start, end), out)
      start = end + 1
    }
    partial = start === 0 ? buffer : buffer.slice(start)
    if (final && partial !== "") {
      line(partial.replace(/\r$/, ""), out)
      partial = ""
    }
    if (partial.length + data.length > options.maxEventChars) failed = true
    return failed ? undefined : out
  }

  return { push: (text) => feed(text, false), end: () => feed("", true) }
}

/** The same, fed with bytes (UTF-8, a character may be cut between two pieces). */
export const makeSseDecoder = (options: { readonly maxEventChars: number }) => {
  const decoder = new TextDecoder()
  const splitter = makeSseSplitter(options)
  return {
    push: (bytes: Uint8Array) => splitter.push(decoder.decode(bytes, { stream: true })),
    end: () => {
      const rest = splitter.push(decoder.decode())
      const last = splitter.end()
      return rest === undefined || last === undefined ? undefined : [...rest, ...last]
    }
  }
}
