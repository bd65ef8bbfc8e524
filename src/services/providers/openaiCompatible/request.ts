import { HttpClientRequest } from "@effect/platform"
import { Option } from "effect"
import type { ChatMessage, ModelRequest, WebSearch } from "../../../domain/modelCall.js"
import type { ProviderRouting } from "../../../domain/modelOptions.js"
import { isOpenRouterUrl } from "../../../settings/paths.js"
import type { SettingsValue } from "../../../settings/values.js"
import { broadcastBody } from "./broadcast.js"

/** Provider routing in OpenRouter's names. */
const providerBody = (p: ProviderRouting) => ({
  ...(p.sort !== undefined ? { sort: p.sort } : {}),
  ...(p.order !== undefined ? { order: p.order } : {}),
  ...(p.allowFallbacks !== undefined ? { allow_fallbacks: p.allowFallbacks } : {})
})

/**
 * How web search is asked for: OpenRouter's server tool, or the deprecated `web` plugin, which a server
 * that refuses the tool is sent once more instead (client.ts).
 */
export type WebForm = "tool" | "plugin"

/** The `openrouter:web_search` tool: only the limits that were set (the rest is the server's default). */
const webTool = (web: WebSearch) => ({
  type: "openrouter:web_search",
  parameters: {
    ...(web.engine !== undefined ? { engine: web.engine } : {}),
    ...(web.maxResults !== undefined ? { max_results: web.maxResults } : {}),
    ...(web.maxUses !== undefined ? { max_uses: web.maxUses } : {}),
    ...(web.allowedDomains !== undefined && web.allowedDomains.length > 0 ? { allowed_domains: web.allowedDomains } : {}),
    ...(web.excludedDomains !== undefined && web.excludedDomains.length > 0 ? { excluded_domains: web.excludedDomains } : {})
  }
})

/** The deprecated plugin takes an engine (not `auto`, the tool's own) and a result count, no domains. */
const webPlugin = (web: WebSearch) => ({
  id: "web",
  ...(web.engine !== undefined && web.engine !== "auto" ? { engine: web.engine } : {}),
  ...(web.maxResults !== undefined ? { max_results: web.maxResults } : {})
})

/** A message with its fields in one order, whatever order its object was built in. */
const messageBody = (m: ChatMessage) => ({ role: m.role, content: m.content })

/** What the body depends on besides the request. */
export interface ChatBodyOptions {
  readonly stream: boolean
  /** OpenRouter's own API: usage comes without asking. */
  readonly openRouter: boolean
  readonly webForm: WebForm
}

/**
 * The JSON body of `POST /chat/completions`: only what was set, in the provider's names. Its keys come in
 * one fixed order at every level, however the request was built: OpenRouter's response cache keys on the
 * body's bytes, so the same call must serialize the same.
 */
export const chatBody = (request: ModelRequest, options: ChatBodyOptions) => ({
  model: request.model,
  messages: request.messages.map(messageBody),
  ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
  ...(request.reasoning !== undefined ? { reasoning: { effort: request.reasoning.effort } } : {}),
  ...(request.provider !== undefined ? { provider: providerBody(request.provider) } : {}),
  ...(request.fallbacks !== undefined && request.fallbacks.length > 0 ? { models: [request.model, ...request.fallbacks] } : {}),
  ...(request.web !== undefined && options.webForm === "tool" ? { tools: [webTool(request.web)] } : {}),
  ...(request.web !== undefined && options.webForm === "plugin" ? { plugins: [webPlugin(request.web)] } : {}),
  stream: options.stream,
  // Other OpenAI-compatible servers (vLLM, Ollama, llama.cpp…) send no usage in a stream unless asked;
  // OpenRouter always does, and has deprecated the option.
  ...(options.stream && !options.openRouter ? { stream_options: { include_usage: true } } : {}),
  ...(request.responseFormat !== undefined
    ? {
      response_format: {
        type: "json_schema",
        json_schema: { name: request.responseFormat.name, schema: request.responseFormat.schema, strict: true }
      }
    }
    : {}),
  // OpenRouter's own fields: another server may refuse a field it does not know.
  ...(request.broadcast !== undefined && options.openRouter ? broadcastBody(request.broadcast) : {})
})

type ClientSettings = Pick<SettingsValue, "baseUrl" | "apiKey" | "appUrl" | "appTitle" | "cacheTtl">

/** OpenRouter's response cache, asked for with its TTL when the `cache` setting is on (other servers ignore it). */
const cacheHeaders = (ttlSeconds: number): Record<string, string> =>
  ttlSeconds > 0 ? { "X-OpenRouter-Cache": "true", "X-OpenRouter-Cache-TTL": String(ttlSeconds) } : {}

/**
 * The provider's requests, built once per client whole — URL, bearer token (kept `Redacted` down to the
 * header, which the platform redacts in its own logs and spans), attribution and cache headers, what each
 * accepts — so that a call only adds its body, and the client runs no request transform per call.
 */
export const providerRequests = (settings: ClientSettings) => {
  const auth = Option.match(settings.apiKey, {
    onNone: () => (request: HttpClientRequest.HttpClientRequest) => request,
    onSome: (key) => HttpClientRequest.bearerToken(key)
  })
  const headers = { "HTTP-Referer": settings.appUrl, "X-Title": settings.appTitle }
  const toProvider = (request: HttpClientRequest.HttpClientRequest) =>
    auth(HttpClientRequest.setHeaders(HttpClientRequest.prependUrl(request, settings.baseUrl), headers))
  const chat = HttpClientRequest.post("/chat/completions").pipe(HttpClientRequest.setHeaders(cacheHeaders(settings.cacheTtl)))
  // A streamed chat asks for server-sent events instead of JSON.
  const chatStreamed = toProvider(HttpClientRequest.accept(chat, "text/event-stream"))
  const chatWhole = toProvider(HttpClientRequest.acceptJson(chat))
  const openRouter = isOpenRouterUrl(settings.baseUrl)
  return {
    openRouter,
    chat: (request: ModelRequest, stream: boolean, webForm: WebForm = "tool"): HttpClientRequest.HttpClientRequest =>
      HttpClientRequest.bodyUnsafeJson(stream ? chatStreamed : chatWhole, chatBody(request, { stream, openRouter, webForm })),
    models: toProvider(HttpClientRequest.get("/models").pipe(HttpClientRequest.acceptJson))
  }
}
