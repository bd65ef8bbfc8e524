import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Option } from "effect"
import type { ModelRequest } from "../../../domain/modelCall.js"
import type { ProviderRouting } from "../../../domain/modelOptions.js"
import type { SettingsValue } from "../../../settings/values.js"
import { broadcastBody } from "./broadcast.js"

/** Provider routing in OpenRouter's names. */
const providerBody = (p: ProviderRouting) => ({
  ...(p.sort !== undefined ? { sort: p.sort } : {}),
  ...(p.order !== undefined ? { order: p.order } : {}),
  ...(p.allowFallbacks !== undefined ? { allow_fallbacks: p.allowFallbacks } : {})
})

/** The JSON body of `POST /chat/completions`: only what was set, in the provider's names. */
export const chatBody = (request: ModelRequest, stream: boolean) => ({
  model: request.model,
  messages: request.messages,
  ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
  ...(request.reasoning !== undefined ? { reasoning: request.reasoning } : {}),
  ...(request.provider !== undefined ? { provider: providerBody(request.provider) } : {}),
  ...(request.fallbacks !== undefined && request.fallbacks.length > 0 ? { models: [request.model, ...request.fallbacks] } : {}),
  ...(request.plugins !== undefined && request.plugins.length > 0 ? { plugins: request.plugins } : {}),
  stream,
  // OpenAI-compatible servers (vLLM, Ollama, llama.cpp…) send no usage in a stream unless asked.
  ...(stream ? { stream_options: { include_usage: true } } : {}),
  ...(request.responseFormat !== undefined
    ? { response_format: { type: "json_schema", json_schema: { ...request.responseFormat, strict: true } } }
    : {}),
  ...(request.broadcast !== undefined ? broadcastBody(request.broadcast) : {})
})

type ClientSettings = Pick<SettingsValue, "baseUrl" | "apiKey" | "appUrl" | "appTitle">

/**
 * The provider's HTTP client: the process's one client, with no span and no traceparent header per
 * request (nothing here exports traces, and the provider has no use for ours).
 */
export const providerHttpClient = (http: HttpClient.HttpClient): HttpClient.HttpClient =>
  http.pipe(HttpClient.withTracerDisabledWhen(() => true))

/**
 * The provider's requests, built once per client whole — URL, bearer token (kept `Redacted` down to the
 * header, which the platform redacts in its own logs and spans), attribution headers, what each accepts —
 * so that a call only adds its body, and the client runs no request transform per call.
 */
export const providerRequests = (settings: ClientSettings) => {
  const auth = Option.match(settings.apiKey, {
    onNone: () => (request: HttpClientRequest.HttpClientRequest) => request,
    onSome: (key) => HttpClientRequest.bearerToken(key)
  })
  const headers = { "HTTP-Referer": settings.appUrl, "X-Title": settings.appTitle }
  const toProvider = (request: HttpClientRequest.HttpClientRequest) =>
    auth(HttpClientRequest.setHeaders(HttpClientRequest.prependUrl(request, settings.baseUrl), headers))
  const chat = HttpClientRequest.post("/chat/completions")
  // A streamed chat asks for server-sent events instead of JSON.
  const chatStreamed = toProvider(HttpClientRequest.accept(chat, "text/event-stream"))
  const chatWhole = toProvider(HttpClientRequest.acceptJson(chat))
  return {
    chat: (request: ModelRequest, stream: boolean): HttpClientRequest.HttpClientRequest =>
      HttpClientRequest.bodyUnsafeJson(stream ? chatStreamed : chatWhole, chatBody(request, stream)),
    models: toProvider(HttpClientRequest.get("/models").pipe(HttpClientRequest.acceptJson))
  }
}
