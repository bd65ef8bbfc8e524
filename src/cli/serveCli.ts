import { defineCommand, integerFlag, switchFlag, textFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in serveCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

// Where `serve --http` listens: flags of `serve` alone, not settings (no other command needs them).
export const SERVE_DEFAULT_HOST = "127.0.0.1"
export const SERVE_DEFAULT_PORT = 8765

export const serveCli = defineCommand("serve", {
  summary: "Run as an MCP server (stdio, or HTTP with --http)",
  details: "Serves the tools of docs/mcp.md, and every run's files as resources. A call waits for its " +
    "run at most --mcp-wait seconds, then answers `running` with the run id. Stdout carries only JSON-RPC; logs go " +
    "to stderr, the log file and the MCP client. Ends when the client closes stdin, or with --http on SIGINT/SIGTERM.",
  args: {},
  flags: {
    http: switchFlag({
      name: "http",
      doc: "Serve MCP Streamable HTTP at /mcp (bearer token required; GET /healthz without), and the run viewer at /runs, instead of stdio."
    }),
    host: textFlag({
      name: "host",
      value: "address",
      doc: `With --http: the address to listen on (default ${SERVE_DEFAULT_HOST}); beyond loopback only with PARALLEL_LLM_HTTP_TOKEN set.`
    }),
    port: integerFlag({
      name: "port",
      value: "port",
      doc: `With --http: the port (default ${SERVE_DEFAULT_PORT}; 0: any free one, printed).`
    })
  },
  settings: "serve"
})
