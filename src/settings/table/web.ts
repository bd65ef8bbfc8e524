import { Schema } from "effect"
import { domainList, integerIn, oneOf } from "../kinds.js"
import { optional, type Topic } from "../setting.js"

/**
 * Web search's limits (`--web` turns it on: run.ts). Only asking the candidates searches. Not per call: an
 * MCP call's `web` searches with the server's limits. `ask` takes their flags too; its `--help`, held to 120
 * lines, only names them.
 */
export const webTopic: Topic = { title: "Web search", commands: ["batch", "serve", "eval"], namedIn: ["ask"] }

/** The engines of OpenRouter's `openrouter:web_search` tool. */
const WebEngine = Schema.Literal("auto", "native", "exa", "firecrawl", "parallel")

const provider = "the provider's"

export const webSettings = {
  webMaxResults: optional({
    field: "webMaxResults",
    preset: true,
    kind: integerIn(1, 100),
    flag: "web-max-results",
    env: "PARALLEL_LLM_WEB_MAX_RESULTS",
    doc: "Results per web search",
    defaultDoc: provider
  }),
  webMaxUses: optional({
    field: "webMaxUses",
    preset: true,
    kind: integerIn(1, 100),
    flag: "web-max-uses",
    env: "PARALLEL_LLM_WEB_MAX_USES",
    doc: "Web searches per call at most",
    defaultDoc: provider
  }),
  webEngine: optional({
    field: "webEngine",
    preset: true,
    kind: oneOf(Schema.compose(Schema.Trim, WebEngine), WebEngine),
    flag: "web-engine",
    env: "PARALLEL_LLM_WEB_ENGINE",
    doc: "Web search engine (`auto`: the model's own search where it has one, else Exa)",
    defaultDoc: provider
  }),
  webDomains: optional({
    field: "webDomains",
    preset: true,
    kind: domainList,
    flag: "web-domain",
    env: "PARALLEL_LLM_WEB_DOMAINS",
    doc: "Search only these domains",
    defaultDoc: "any"
  }),
  webExcludeDomains: optional({
    field: "webExcludeDomains",
    preset: true,
    kind: domainList,
    flag: "web-exclude-domain",
    env: "PARALLEL_LLM_WEB_EXCLUDE_DOMAINS",
    doc: "Never search these domains",
    defaultDoc: "none"
  })
}
