/**
 * A loopback fake of the OpenRouter HTTP API, for tests and benchmarks.
 *
 * - Plain `node:http`, no dependencies, no Effect. Written in erasable TypeScript
 *   only (no enums, namespaces or parameter properties) so it also runs type-stripped.
 * - Listens on 127.0.0.1 with an ephemeral port; never reaches the internet.
 * - Routes (under `/api/v1`, which is part of `url`):
 *     POST /chat/completions  answered according to the scripted {@link Behavior}s
 *     GET  /models            the model list (configurable)
 *   Anything else is a 404 JSON error.
 *
 * Behaviors are chosen per requested model: the Nth chat request for a model uses
 * `script[model][N-1]` (the last one repeats). Models not in the script use the
 * default behavior (ok with content `Answer from <model>`).
 *
 * A body with a `models` list (OpenRouter's fallbacks) is served by the first model of the list whose
 * behavior is not an HTTP error status, as OpenRouter does; the answer names that model.
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

export interface FakeUsage {
  prompt_tokens: number
  completion_tokens: number
  /** null: no cost in the usage (a server that does not report costs). */
  cost?: number | null
  /** Sent as `completion_tokens_details.reasoning_tokens`. */
  reasoning_tokens?: number
  /** Sent as `prompt_tokens_details.cached_tokens`. */
  cached_tokens?: number
  /** Sent as is (OpenRouter's `upstream_inference_cost`…). */
  cost_details?: Record<string, number>
}

export type Behavior =
  | {
    kind: "ok"
    content?: string
    delayMs?: number
    servedBy?: string
    /** null: no usage at all, as a server that does not report it (stream: no usage chunk). */
    usage?: FakeUsage | null
    finishReason?: string
    /** stream:true: how long the response stays open after `[DONE]` before it ends (default: ends at once). */
    endAfterDoneMs?: number
    /** `message.annotations` (web citations); stream:true: sent in a delta of their own after the text. */
    annotations?: unknown
    /** Response headers besides the content type (`X-OpenRouter-Cache-Status`…). */
    headers?: Record<string, string>
    /**
     * Holds the answer until the promise this returns (called per request) settles: a test releases it once it has
     * seen what it wants to see while the call is in flight, instead of waiting out a delay.
     */
    until?: () => PromiseLike<unknown>
  }
  /** JSON error body, default `{error:{code:status,message:"..."}}`. A string `body` is sent verbatim. */
  | { kind: "status"; status: number; body?: unknown; retryAfter?: number | string; delayMs?: number }
  /** Accept the request, never answer (until the client aborts or the fake closes). */
  | { kind: "hang" }
  /** Destroy the socket (TCP RST) without an answer: ECONNRESET at the client. */
  | { kind: "reset"; delayMs?: number }
  /** 200, content-type json, invalid JSON text. */
  | { kind: "malformed"; delayMs?: number }
  /** An HTML page from a proxy (default status 502). */
  | { kind: "html"; status?: number }
  /** 200 with `choices: []`. */
  | { kind: "emptyChoices" }
  /** 200 with `message.content: null`. */
  | { kind: "nullContent" }
  /** 200 with `message.content: ""`. */
  | { kind: "emptyContent" }
  /** 200 + `{error:{code,message}}` (always a JSON body, even for stream requests). */
  | { kind: "errorIn200"; code?: number | string; message?: string }
  /** 200 + a choice with `finish_reason: "error"` and an `error` object (for stream: like streamError). */
  | { kind: "choiceError"; partial?: string; code?: number | string; message?: string }
  /** stream:true: some deltas, then the error chunk, then the stream ends. Non-stream: like errorIn200. */
  | {
    kind: "streamError"
    partial?: string
    code?: number | string
    message?: string
    /** A usage chunk after the partial text and before the error (a provider that bills the cut reply). */
    usage?: FakeUsage
  }
  /** A valid 200 JSON body (or SSE deltas) whose content is `bytes` long, sent in chunks. */
  | { kind: "huge"; bytes: number }
  /**
   * Body (or SSE deltas) sent slowly in `chunks` pieces (default 5), `chunkDelayMs` apart. For a stream,
   * `firstDelayMs` (default `chunkDelayMs`) is the wait before the first delta.
   */
  | { kind: "trickle"; content?: string; chunkDelayMs: number; chunks?: number; firstDelayMs?: number }

/** An array = one behavior per attempt, the last one repeats. */
export interface Script {
  [model: string]: Behavior | Behavior[]
}

export interface RecordedRequest {
  method: string
  /** URL pathname, e.g. `/api/v1/chat/completions` (no query string). */
  path: string
  headers: Record<string, string | string[] | undefined>
  /** Parsed JSON body (the raw text if it was not JSON; undefined when empty). */
  body: unknown
  /** The requested model (chat requests). */
  model?: string
  /** 1-based attempt number for the model; 0 when no behavior was applied (non-chat, 401, 400). */
  attempt: number
  /** The client went away before the response ended. */
  aborted: boolean
  startedAt: number
  endedAt?: number
}

export interface ModelSpec {
  id: string
  name?: string
  context_length?: number
  /** USD per token, as strings (OpenRouter style). */
  pricing?: { prompt: string; completion: string }
  supported_parameters?: ReadonlyArray<string>
  /** What the model reads (default `["text"]`); `["text", "image"]` for a model that sees images. */
  input_modalities?: ReadonlyArray<string>
  /** A `~…-latest` row: the concrete model it resolves to (OpenRouter's `alias_target`). */
  alias_target?: { slug: string; name?: string }
}

export interface FakeOpenRouterOptions {
  script?: Script
  default?: Behavior
  /** When set, every request needs `Authorization: Bearer <requireKey>` (else 401). */
  requireKey?: string
  /** Explicit model list for GET /models (default: a few well-known models + every scripted model). */
  models?: ReadonlyArray<ModelSpec>
  log?: (line: string) => void
}

export interface FakeOpenRouter {
  /** Base URL, e.g. http://127.0.0.1:PORT/api/v1 */
  readonly url: string
  readonly port: number
  /** Every request received (chat, models, unknown paths) since start or the last reset(). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** TCP connections accepted so far. */
  readonly connections: number
  /** Chat requests currently open. */
  readonly inFlight: number
  /** The highest inFlight seen. */
  readonly maxInFlight: number
  /** Only the POST /chat/completions requests. */
  chatRequests(): ReadonlyArray<RecordedRequest>
  /** Requests whose client went away before the response ended. */
  abortedRequests(): ReadonlyArray<RecordedRequest>
  /** Replace behaviors (attempt counters reset). */
  setScript(script: Script): void
  /** Behavior for models not in the script. */
  setDefault(b: Behavior): void
  setModels(list: ReadonlyArray<ModelSpec>): void
  /** Clear recorded requests, connection / maxInFlight / attempt counters (not the script). */
  reset(): void
  /** Resolves when n chat requests have arrived (since start or the last reset()). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>
  /** Closes the server and destroys every open socket. Idempotent. */
  close(): Promise<void>
}

/** A gate for an "ok" behavior's `until`: closed until `open()`; `close()` arms it again (each test its own). */
export const makeGate = () => {
  let release = (): void => undefined
  let gate: Promise<void> = Promise.resolve()
  let closed = false
  // Closing a gate that is closed already keeps the promise it has: a request waiting on it is let through by the next
  // `open`, not left waiting on a promise nothing can resolve any more.
  const close = (): void => {
    if (closed) return
    closed = true
    gate = new Promise<void>((resolve) => (release = resolve))
  }
  const open = (): void => {
    closed = false
    release()
  }
  close()
  return { until: (): Promise<void> => gate, open, close }
}

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

const PREFIX = "/api/v1"
const KEEP_ALIVE_COMMENT = ": OPENROUTER PROCESSING\n\n"
const DEFAULT_USAGE: { prompt_tokens: number; completion_tokens: number; cost: number } = {
  prompt_tokens: 10,
  completion_tokens: 20,
  cost: 0.0001
}
const WRITE_CHUNK = 64 * 1024

const STATUS_MESSAGES: Readonly<Record<number, string>> = {
  400: "Bad Request: invalid or missing parameters",
  401: "No auth credentials found",
  402: "Insufficient credits. Add more using https://openrouter.ai/credits",
  403: "Input was flagged by moderation",
  404: "No endpoints found for this model",
  408: "Request timed out",
  413: "Request payload too large",
  422: "Unprocessable entity",
  429: "Rate limit exceeded",
  500: "Internal Server Error",
  502: "Provider returned error",
  503: "No available model provider that meets your routing requirements",
  524: "Provider timed out",
  529: "Provider is overloaded"
}

const REASON_PHRASES: Readonly<Record<number, string>> = {
  524: "A Timeout Occurred",
  529: "Site is overloaded"
}

const SUPPORTED_PARAMETERS: ReadonlyArray<string> = [
  "temperature",
  "max_tokens",
  "top_p",
  "stop",
  "seed",
  "frequency_penalty",
  "presence_penalty"
]

export const DEFAULT_MODELS: ReadonlyArray<ModelSpec> = [
  {
    id: "openai/gpt-4o-mini",
    name: "OpenAI: GPT-4o-mini",
    context_length: 128000,
    pricing: { prompt: "0.00000015", completion: "0.0000006" }
  },
  { id: "openai/gpt-4o", name: "OpenAI: GPT-4o", context_length: 128000, pricing: { prompt: "0.0000025", completion: "0.00001" } },
  {
    id: "anthropic/claude-3.5-sonnet",
    name: "Anthropic: Claude 3.5 Sonnet",
    context_length: 200000,
    pricing: { prompt: "0.000003", completion: "0.000015" }
  },
  {
    id: "google/gemini-2.0-flash-001",
    name: "Google: Gemini 2.0 Flash",
    context_length: 1048576,
    pricing: { prompt: "0.0000001", completion: "0.0000004" }
  },
  {
    id: "meta-llama/llama-3.1-8b-instruct",
    name: "Meta: Llama 3.1 8B Instruct",
    context_length: 131072,
    pricing: { prompt: "0.00000002", completion: "0.00000005" }
  },
  { id: "mistralai/mistral-small", name: "Mistral Small", context_length: 32768, pricing: { prompt: "0.0000002", completion: "0.0000006" } }
]

const HTML_PAGE = (status: number): string =>
  `<!DOCTYPE html>\n<html>\n<head><title>${status} Bad Gateway</title></head>\n<body>\n<center><h1>${status} Bad Gateway</h1></center>\n<hr><center>cloudflare</center>\n</body>\n</html>\n`

// ---------------------------------------------------------------------------
// Implementation helpers
// ---------------------------------------------------------------------------

/** Per-request state: closed when the response is done or the socket went away. */
interface Ctx {
  closed: boolean
  /** The fake itself destroyed the socket ("reset" behavior or close()): not a client abort. */
  serverSide: boolean
  cancels: Set<() => void>
}

function sleep(ctx: Ctx, ms: number | undefined): Promise<boolean> {
  if (ctx.closed) return Promise.resolve(false)
  if (ms === undefined || ms <= 0) return Promise.resolve(true)
  return new Promise<boolean>((resolve) => {
    const cancel = (): void => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      ctx.cancels.delete(cancel)
      resolve(!ctx.closed)
    }, ms)
    ctx.cancels.add(cancel)
  })
}

/** Waits for `gate` to settle; false if the response closed meanwhile. */
function held(ctx: Ctx, gate: PromiseLike<unknown>): Promise<boolean> {
  if (ctx.closed) return Promise.resolve(false)
  return new Promise<boolean>((resolve) => {
    const cancel = (): void => resolve(false)
    ctx.cancels.add(cancel)
    const release = (): void => {
      ctx.cancels.delete(cancel)
      resolve(!ctx.closed)
    }
    gate.then(release, release)
  })
}

/** Write honoring backpressure; false if the response closed meanwhile. */
function write(ctx: Ctx, res: http.ServerResponse, chunk: string): Promise<boolean> {
  if (ctx.closed) return Promise.resolve(false)
  if (res.write(chunk)) return Promise.resolve(true)
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean): void => {
      ctx.cancels.delete(cancel)
      res.off("drain", onDrain)
      resolve(ok)
    }
    const onDrain = (): void => done(!ctx.closed)
    const cancel = (): void => done(false)
    res.on("drain", onDrain)
    ctx.cancels.add(cancel)
  })
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v)
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const parts: Buffer[] = []
    let ended = false
    req.on("data", (c: Buffer) => parts.push(c))
    req.on("end", () => {
      ended = true
      resolve(Buffer.concat(parts).toString("utf8"))
    })
    req.on("error", reject)
    req.on("close", () => {
      if (!ended) reject(new Error("request closed before its body was read"))
    })
  })
}

/** Split text into `n` roughly equal pieces (at least one piece, possibly ""). */
function splitInto(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(Math.floor(n), text.length || 1))
  const size = Math.ceil(text.length / count)
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(text.slice(i * size, (i + 1) * size))
  return out.filter((p, i) => p.length > 0 || i === 0)
}

/** Split text into words (keeping the whitespace) for natural-looking deltas. */
function splitWords(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g)
  return words === null || words.length === 0 ? [text] : words
}

function bigContent(bytes: number): string {
  const unit = "lorem ipsum dolor sit amet "
  const n = Math.max(0, Math.floor(bytes))
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n)
}

function modelName(id: string): string {
  const [vendor, rest] = id.includes("/") ? [id.slice(0, id.indexOf("/")), id.slice(id.indexOf("/") + 1)] : ["", id]
  return vendor === "" ? rest : `${vendor.charAt(0).toUpperCase()}${vendor.slice(1)}: ${rest}`
}

let idCounter = 0
function genId(): string {
  idCounter += 1
  return `gen-${Date.now()}-${idCounter}-${Math.random().toString(36).slice(2, 10)}`
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

export function startFakeOpenRouter(options: FakeOpenRouterOptions = {}): Promise<FakeOpenRouter> {
  let script: Script = { ...(options.script ?? {}) }
  let defaultBehavior: Behavior | undefined = options.default
  let explicitModels: ReadonlyArray<ModelSpec> | undefined = options.models
  const requireKey = options.requireKey
  const log = options.log ?? ((): void => undefined)

  let requests: RecordedRequest[] = []
  let chatCount = 0
  let attempts = new Map<string, number>()
  let connections = 0
  let inFlight = 0
  let maxInFlight = 0
  let closing = false
  let closePromise: Promise<void> | undefined
  const sockets = new Set<Socket>()
  const liveCtxs = new Set<Ctx>()

  interface Waiter {
    n: number
    resolve: () => void
    reject: (e: Error) => void
    timer: ReturnType<typeof setTimeout>
  }
  let waiters: Waiter[] = []
  const checkWaiters = (): void => {
    const ready = waiters.filter((w) => chatCount >= w.n)
    if (ready.length === 0) return
    waiters = waiters.filter((w) => chatCount < w.n)
    for (const w of ready) {
      clearTimeout(w.timer)
      w.resolve()
    }
  }

  const behaviorFor = (model: string, attempt: number): Behavior => {
    const entry = Object.prototype.hasOwnProperty.call(script, model) ? script[model] : undefined
    if (entry === undefined) return defaultBehavior ?? { kind: "ok" }
    if (!Array.isArray(entry)) return entry
    const b = entry[Math.min(attempt, entry.length) - 1]
    return b ?? defaultBehavior ?? { kind: "ok" }
  }

  const modelList = (): ModelSpec[] => {
    if (explicitModels !== undefined) return [...explicitModels]
    const list = [...DEFAULT_MODELS]
    const ids = new Set(list.map((m) => m.id))
    for (const id of Object.keys(script)) {
      if (!ids.has(id)) {
        ids.add(id)
        list.push({ id })
      }
    }
    return list
  }

  // ---- response helpers -------------------------------------------------

  const sendJson = (
    res: http.ServerResponse,
    status: number,
    payload: unknown,
    extraHeaders: Record<string, string> = {}
  ): void => {
    const text = typeof payload === "string" ? payload : JSON.stringify(payload)
    res.writeHead(status, REASON_PHRASES[status] ?? http.STATUS_CODES[status] ?? "Unknown", {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...extraHeaders
    })
    res.end(text)
  }

  const errorBody = (status: number, model: string | undefined): unknown => {
    const error: Record<string, unknown> = { code: status, message: STATUS_MESSAGES[status] ?? `HTTP ${status}` }
    if (status === 403) {
      error.metadata = { reasons: ["fake-moderation"], flagged_input: "...", provider_name: "FakeProvider", model_slug: model ?? "" }
    } else if (status === 502) {
      error.metadata = { provider_name: "FakeProvider", raw: "upstream error" }
    }
    return { error }
  }

  const usageOf = (u: FakeUsage | undefined): Record<string, unknown> => {
    const prompt = u?.prompt_tokens ?? DEFAULT_USAGE.prompt_tokens
    const completion = u?.completion_tokens ?? DEFAULT_USAGE.completion_tokens
    const base: Record<string, unknown> = {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      ...(u?.reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning_tokens } } : {}),
      ...(u?.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
      ...(u?.cost_details !== undefined ? { cost_details: u.cost_details } : {})
    }
    return u?.cost === null ? base : { ...base, cost: u?.cost ?? DEFAULT_USAGE.cost }
  }

  const completion = (
    id: string,
    model: string,
    choices: unknown[],
    usage: FakeUsage | null | undefined
  ): Record<string, unknown> => ({
    id,
    provider: "FakeProvider",
    model,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    choices,
    ...(usage === null ? {} : { usage: usageOf(usage) })
  })

  const okChoice = (content: string | null, finishReason = "stop", annotations?: unknown): Record<string, unknown> => ({
    index: 0,
    message: { role: "assistant", content, ...(annotations !== undefined ? { annotations } : {}) },
    finish_reason: finishReason
  })

  // ---- SSE --------------------------------------------------------------

  const startSse = async (ctx: Ctx, res: http.ServerResponse, headers: Record<string, string> = {}): Promise<boolean> => {
    if (ctx.closed) return false
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers })
    return write(ctx, res, KEEP_ALIVE_COMMENT)
  }

  const chunk = (id: string, model: string, extra: Record<string, unknown>): string =>
    `data: ${
      JSON.stringify({
        id,
        provider: "FakeProvider",
        model,
        object: "chat.completion.chunk",
        created: Math.floor(Date.now() / 1000),
        ...extra
      })
    }\n\n`

  const deltaChunk = (id: string, model: string, content: string | null): string =>
    chunk(id, model, { choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null }] })

  /** Final stop chunk, usage chunk, [DONE]. */
  const finishSse = async (
    ctx: Ctx,
    res: http.ServerResponse,
    id: string,
    model: string,
    finishReason: string,
    usage: FakeUsage | null | undefined,
    endAfterDoneMs?: number
  ): Promise<void> => {
    if (
      !(await write(
        ctx,
        res,
        chunk(id, model, { choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: finishReason }] })
      ))
    ) return
    if (usage !== null && !(await write(ctx, res, chunk(id, model, { choices: [], usage: usageOf(usage) })))) return
    if (!(await write(ctx, res, "data: [DONE]\n\n"))) return
    if (endAfterDoneMs !== undefined && !(await sleep(ctx, endAfterDoneMs))) return
    res.end()
  }

  const sseError = async (
    ctx: Ctx,
    res: http.ServerResponse,
    id: string,
    model: string,
    partial: string,
    code: number | string,
    message: string,
    usage?: FakeUsage
  ): Promise<void> => {
    if (!(await startSse(ctx, res))) return
    if (partial.length > 0) {
      for (const piece of splitWords(partial)) if (!(await write(ctx, res, deltaChunk(id, model, piece)))) return
    }
    if (usage !== undefined && !(await write(ctx, res, chunk(id, model, { choices: [], usage: usageOf(usage) })))) return
    const errChunk = chunk(id, model, {
      error: { code, message },
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }]
    })
    if (!(await write(ctx, res, errChunk))) return
    res.end()
  }

  // ---- behaviors --------------------------------------------------------

  const runBehavior = async (
    b: Behavior,
    ctx: Ctx,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    model: string,
    stream: boolean
  ): Promise<void> => {
    const id = genId()
    switch (b.kind) {
      case "ok": {
        if (!(await sleep(ctx, b.delayMs))) return
        if (b.until !== undefined && !(await held(ctx, b.until()))) return
        const served = b.servedBy ?? model
        const content = b.content ?? `Answer from ${model}`
        const finishReason = b.finishReason ?? "stop"
        if (!stream) {
          sendJson(res, 200, completion(id, served, [okChoice(content, finishReason, b.annotations)], b.usage), b.headers)
          return
        }
        if (!(await startSse(ctx, res, b.headers))) return
        for (const piece of splitWords(content)) if (!(await write(ctx, res, deltaChunk(id, served, piece)))) return
        if (b.annotations !== undefined) {
          const cited = { index: 0, delta: { role: "assistant", content: "", annotations: b.annotations }, finish_reason: null }
          if (!(await write(ctx, res, chunk(id, served, { choices: [cited] })))) return
        }
        await finishSse(ctx, res, id, served, finishReason, b.usage, b.endAfterDoneMs)
        return
      }
      case "status": {
        if (!(await sleep(ctx, b.delayMs))) return
        const headers: Record<string, string> = {}
        if (b.retryAfter !== undefined) headers["retry-after"] = String(b.retryAfter)
        sendJson(res, b.status, b.body === undefined ? errorBody(b.status, model) : b.body, headers)
        return
      }
      case "hang":
        return // the response stays open until the client (or close()) ends it
      case "reset": {
        if (!(await sleep(ctx, b.delayMs))) return
        ctx.serverSide = true
        req.socket.resetAndDestroy()
        return
      }
      case "malformed": {
        if (!(await sleep(ctx, b.delayMs))) return
        sendJson(
          res,
          200,
          `{"id":"${id}","model":"${model}","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"trunc`
        )
        return
      }
      case "html": {
        const status = b.status ?? 502
        const page = HTML_PAGE(status)
        res.writeHead(status, REASON_PHRASES[status] ?? http.STATUS_CODES[status] ?? "Unknown", {
          "content-type": "text/html; charset=UTF-8",
          "content-length": String(Buffer.byteLength(page))
        })
        res.end(page)
        return
      }
      case "emptyChoices": {
        if (!stream) {
          sendJson(res, 200, completion(id, model, [], undefined))
          return
        }
        if (!(await startSse(ctx, res))) return
        if (!(await write(ctx, res, chunk(id, model, { choices: [], usage: usageOf(undefined) })))) return
        if (!(await write(ctx, res, "data: [DONE]\n\n"))) return
        res.end()
        return
      }
      case "nullContent":
      case "emptyContent": {
        const content = b.kind === "nullContent" ? null : ""
        if (!stream) {
          sendJson(res, 200, completion(id, model, [okChoice(content)], undefined))
          return
        }
        if (!(await startSse(ctx, res))) return
        if (!(await write(ctx, res, deltaChunk(id, model, content)))) return
        await finishSse(ctx, res, id, model, "stop", undefined)
        return
      }
      case "errorIn200": {
        sendJson(res, 200, { error: { code: b.code ?? 502, message: b.message ?? STATUS_MESSAGES[502] ?? "Provider returned error" } })
        return
      }
      case "choiceError": {
        const code = b.code ?? 502
        const message = b.message ?? STATUS_MESSAGES[502] ?? "Provider returned error"
        if (stream) {
          await sseError(ctx, res, id, model, b.partial ?? "", code, message)
          return
        }
        sendJson(
          res,
          200,
          completion(
            id,
            model,
            [{ index: 0, message: { role: "assistant", content: b.partial ?? "" }, finish_reason: "error", error: { code, message } }],
            undefined
          )
        )
        return
      }
      case "streamError": {
        const code = b.code ?? "server_error"
        const message = b.message ?? "Provider disconnected unexpectedly"
        if (!stream) {
          sendJson(res, 200, { error: { code, message } })
          return
        }
        await sseError(ctx, res, id, model, b.partial ?? "Partial answer from the model", code, message, b.usage)
        return
      }
      case "huge": {
        const content = bigContent(b.bytes)
        if (stream) {
          if (!(await startSse(ctx, res))) return
          for (let i = 0; i < content.length; i += WRITE_CHUNK) {
            if (!(await write(ctx, res, deltaChunk(id, model, content.slice(i, i + WRITE_CHUNK))))) return
          }
          await finishSse(ctx, res, id, model, "stop", undefined)
          return
        }
        const text = JSON.stringify(completion(id, model, [okChoice(content)], undefined))
        res.writeHead(200, { "content-type": "application/json" })
        for (let i = 0; i < text.length; i += WRITE_CHUNK) {
          if (!(await write(ctx, res, text.slice(i, i + WRITE_CHUNK)))) return
        }
        res.end()
        return
      }
      case "trickle": {
        const content = b.content ?? `Answer from ${model}`
        const pieces = b.chunks ?? 5
        if (stream) {
          if (!(await startSse(ctx, res))) return
          let delayMs = b.firstDelayMs ?? b.chunkDelayMs
          for (const piece of splitInto(content, pieces)) {
            if (!(await sleep(ctx, delayMs))) return
            delayMs = b.chunkDelayMs
            if (!(await write(ctx, res, deltaChunk(id, model, piece)))) return
          }
          await finishSse(ctx, res, id, model, "stop", undefined)
          return
        }
        const text = JSON.stringify(completion(id, model, [okChoice(content)], undefined))
        res.writeHead(200, { "content-type": "application/json" })
        let first = true
        for (const piece of splitInto(text, pieces)) {
          if (!first && !(await sleep(ctx, b.chunkDelayMs))) return
          first = false
          if (!(await write(ctx, res, piece))) return
        }
        res.end()
        return
      }
    }
  }

  // ---- request handling -------------------------------------------------

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const method = req.method ?? "GET"
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname
    const isChat = path === `${PREFIX}/chat/completions`
    const startedAt = Date.now()

    const ctx: Ctx = { closed: false, serverSide: false, cancels: new Set() }
    liveCtxs.add(ctx)
    let record: RecordedRequest | undefined
    let counted = false
    if (isChat && method === "POST") {
      counted = true
      inFlight += 1
      if (inFlight > maxInFlight) maxInFlight = inFlight
    }
    let ended = false
    const onEnd = (): void => {
      if (ended) return
      ended = true
      ctx.closed = true
      liveCtxs.delete(ctx)
      for (const cancel of ctx.cancels) cancel()
      ctx.cancels.clear()
      if (counted) inFlight -= 1
      if (record !== undefined) {
        record.endedAt = Date.now()
        if (!res.writableFinished && !ctx.serverSide && !closing) {
          record.aborted = true
          log(`${method} ${path} model=${record.model ?? "-"} attempt=${record.attempt}: client aborted`)
        }
      }
    }
    res.on("close", onEnd)
    res.on("finish", () => {
      // 'close' follows; only stamp the end time early.
      if (record !== undefined) record.endedAt = Date.now()
    })

    let raw: string
    try {
      raw = await readBody(req)
    } catch {
      onEnd()
      return
    }
    let body: unknown = undefined
    let bodyIsJson = raw.length === 0
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw) as unknown
        bodyIsJson = true
      } catch {
        body = raw
      }
    }
    const model = isRecord(body) && typeof body.model === "string" ? body.model : undefined
    record = { method, path, headers: { ...req.headers }, body, attempt: 0, aborted: false, startedAt }
    if (model !== undefined) record.model = model
    requests.push(record)
    if (isChat && method === "POST") {
      chatCount += 1
      checkWaiters()
    }
    if (ctx.closed) {
      onEnd()
      return
    }

    if (requireKey !== undefined && req.headers.authorization !== `Bearer ${requireKey}`) {
      log(`${method} ${path}: 401`)
      sendJson(res, 401, { error: { code: 401, message: "No auth credentials found" } })
      return
    }

    if (path === `${PREFIX}/models`) {
      if (method !== "GET") {
        sendJson(res, 405, { error: { code: 405, message: `Method ${method} not allowed` } })
        return
      }
      const data = modelList().map((m) => ({
        id: m.id,
        name: m.name ?? modelName(m.id),
        created: 1700000000,
        description: `Fake model ${m.id}`,
        context_length: m.context_length ?? 128000,
        architecture: {
          modality: m.input_modalities?.includes("image") === true ? "text+image->text" : "text->text",
          input_modalities: [...(m.input_modalities ?? ["text"])],
          output_modalities: ["text"],
          tokenizer: "Other"
        },
        pricing: { ...(m.pricing ?? { prompt: "0.000001", completion: "0.000002" }), request: "0", image: "0" },
        top_provider: { context_length: m.context_length ?? 128000, max_completion_tokens: 16384, is_moderated: false },
        supported_parameters: [...(m.supported_parameters ?? SUPPORTED_PARAMETERS)],
        ...(m.alias_target !== undefined ? { alias_target: { name: m.alias_target.slug, ...m.alias_target } } : {})
      }))
      sendJson(res, 200, { data })
      return
    }

    if (!isChat) {
      sendJson(res, 404, { error: { code: 404, message: `Not found: ${method} ${path}` } })
      return
    }
    if (method !== "POST") {
      sendJson(res, 405, { error: { code: 405, message: `Method ${method} not allowed` } })
      return
    }
    if (!bodyIsJson || !isRecord(body)) {
      sendJson(res, 400, { error: { code: 400, message: "Invalid JSON body" } })
      return
    }
    if (model === undefined) {
      sendJson(res, 400, { error: { code: 400, message: "model is required" } })
      return
    }
    if (!Array.isArray(body.messages)) {
      sendJson(res, 400, { error: { code: 400, message: "messages must be an array" } })
      return
    }

    const attempt = (attempts.get(model) ?? 0) + 1
    attempts.set(model, attempt)
    record.attempt = attempt
    let behavior = behaviorFor(model, attempt)
    let served = model
    // OpenRouter's fallbacks: the next model of `models` when this one answers with an error status.
    const fallbacks = Array.isArray(body.models) ? body.models.filter((m): m is string => typeof m === "string").slice(1) : []
    for (const next of fallbacks) {
      if (behavior.kind !== "status") break
      const nextAttempt = (attempts.get(next) ?? 0) + 1
      attempts.set(next, nextAttempt)
      behavior = behaviorFor(next, nextAttempt)
      served = next
    }
    const stream = body.stream === true
    log(`${method} ${path} model=${model} attempt=${attempt} stream=${stream} -> ${served} ${behavior.kind}`)
    await runBehavior(behavior, ctx, req, res, served, stream)
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log(`fake OpenRouter handler error: ${err instanceof Error ? err.message : String(err)}`)
      if (!res.headersSent) {
        try {
          sendJson(res, 500, { error: { code: 500, message: "fake server error" } })
        } catch {
          res.destroy()
        }
      } else {
        res.destroy()
      }
    })
  })
  server.keepAliveTimeout = 30_000
  server.headersTimeout = 35_000
  server.on("connection", (socket: Socket) => {
    connections += 1
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("clientError", (_err, socket: Socket) => {
    socket.destroy()
  })

  return new Promise<FakeOpenRouter>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      const port = (server.address() as AddressInfo).port
      const url = `http://127.0.0.1:${port}${PREFIX}`
      log(`fake OpenRouter listening on ${url}`)

      const fake: FakeOpenRouter = {
        url,
        port,
        get requests(): ReadonlyArray<RecordedRequest> {
          return requests
        },
        get connections(): number {
          return connections
        },
        get inFlight(): number {
          return inFlight
        },
        get maxInFlight(): number {
          return maxInFlight
        },
        chatRequests: () => requests.filter((r) => r.method === "POST" && r.path === `${PREFIX}/chat/completions`),
        abortedRequests: () => requests.filter((r) => r.aborted),
        setScript: (s: Script): void => {
          script = { ...s }
          attempts = new Map()
        },
        setDefault: (b: Behavior): void => {
          defaultBehavior = b
        },
        setModels: (list: ReadonlyArray<ModelSpec>): void => {
          explicitModels = [...list]
        },
        reset: (): void => {
          requests = []
          chatCount = 0
          attempts = new Map()
          connections = 0
          maxInFlight = inFlight
        },
        waitForRequests: (n: number, timeoutMs = 5_000): Promise<void> => {
          if (chatCount >= n) return Promise.resolve()
          return new Promise<void>((res, rej) => {
            const waiter: Waiter = {
              n,
              resolve: res,
              reject: rej,
              timer: setTimeout(() => {
                waiters = waiters.filter((w) => w !== waiter)
                rej(new Error(`fake OpenRouter: expected ${n} chat requests within ${timeoutMs} ms, got ${chatCount}`))
              }, timeoutMs)
            }
            waiters.push(waiter)
          })
        },
        close: (): Promise<void> => {
          if (closePromise !== undefined) return closePromise
          closing = true
          closePromise = new Promise<void>((res) => {
            for (const w of waiters) {
              clearTimeout(w.timer)
              w.reject(new Error("fake OpenRouter closed"))
            }
            waiters = []
            for (const ctx of liveCtxs) {
              ctx.serverSide = true
              for (const cancel of ctx.cancels) cancel()
              ctx.cancels.clear()
            }
            server.close(() => res())
            server.closeAllConnections()
            for (const s of sockets) s.destroy()
            sockets.clear()
          })
          return closePromise
        }
      }
      resolve(fake)
    })
  })
}
