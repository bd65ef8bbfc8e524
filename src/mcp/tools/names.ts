// The tools' names, in the order `tools/list` shows them, in a module of their own: `serve --help` lists them
// without loading the MCP server and its schemas (the CLI's start-up). test/unit/toolNames.test.ts holds them
// to `tools` (index.ts).
export const TOOL_NAMES = [
  "process_prompt",
  "get_run",
  "continue_run",
  "cancel_run",
  "resynthesize",
  "list_runs",
  "list_models",
  "get_config"
] as const
