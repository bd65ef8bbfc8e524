// The OpenRouter client lives in ./openrouter/ (request building, wire schemas, response decoding,
// the streamed answer, the service): this module is its public face for the rest of the program.
export { layerOpenRouterClient, makeOpenRouterClient, OpenRouterClient, type OpenRouterClientShape } from "./openrouter/client.js"
export type { ChatMessage, CompletionRequest, ContentPart } from "./openrouter/request.js"
export { type Completion, type ModelInfo, parseRetryAfter } from "./openrouter/response.js"
