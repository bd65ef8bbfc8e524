import { integerIn, numberIn, originList, switchOn } from "../kinds.js"
import { secondsToMs, type Topic, withDefault } from "../setting.js"

/** How `serve` answers MCP clients. */
export const serveTopic: Topic = { title: "Serve", commands: ["serve"] }

export const serveSettings = {
  mcpWait: withDefault({
    field: "mcpWaitMs",
    kind: numberIn(0, 3_600),
    flag: "mcp-wait",
    env: "PARALLEL_LLM_MCP_WAIT",
    doc:
      "Seconds an MCP call waits for its run before answering `running` with the run id (0: at once); keep it under the client's timeout",
    default: 45,
    defaultDoc: "45",
    convert: secondsToMs
  }),
  resourceLinks: withDefault({
    field: "resourceLinks",
    kind: switchOn,
    flag: "resource-links",
    env: "PARALLEL_LLM_RESOURCE_LINKS",
    doc: "Add `resource_link` blocks to MCP tool results (some clients fail on them)",
    default: false,
    defaultDoc: "false"
  }),
  // `serve --http` only (where it listens is a flag of `serve`: --host, --port).
  httpMaxSessions: withDefault({
    field: "httpMaxSessions",
    kind: integerIn(1, 10_000),
    flag: "http-max-sessions",
    env: "PARALLEL_LLM_HTTP_MAX_SESSIONS",
    doc: "`serve --http`: MCP sessions open at once; one more is refused with HTTP 503",
    default: 64,
    defaultDoc: "64"
  }),
  httpSessionIdle: withDefault({
    field: "httpSessionIdleMs",
    kind: numberIn(1, 604_800),
    flag: "http-session-idle",
    env: "PARALLEL_LLM_HTTP_SESSION_IDLE",
    doc: "`serve --http`: seconds without a request after which a session ends (its runs go on)",
    default: 1_800,
    defaultDoc: "1800 (30 minutes)",
    convert: secondsToMs
  }),
  httpMaxBody: withDefault({
    field: "httpMaxBodyBytes",
    kind: integerIn(1_024, 64 * 1024 * 1024),
    flag: "http-max-body",
    env: "PARALLEL_LLM_HTTP_MAX_BODY",
    doc: "`serve --http`: largest request body in bytes; a larger one is refused with HTTP 413",
    default: 1024 * 1024,
    defaultDoc: "1048576 (1 MiB)"
  }),
  httpAllowedOrigins: withDefault({
    field: "httpAllowedOrigins",
    kind: originList,
    flag: "http-allowed-origin",
    env: "PARALLEL_LLM_HTTP_ALLOWED_ORIGINS",
    doc: "`serve --http`: browser origins allowed besides loopback ones (any other `Origin` gets HTTP 403)",
    default: [],
    defaultDoc: "none (loopback origins only)"
  })
}
