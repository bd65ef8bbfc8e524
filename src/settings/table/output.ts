import { headerText, logLevel, nonEmptyText, url } from "../kinds.js"
import { defaultOutputDir } from "../paths.js"
import { absolutePath, type CommandName, optional, type Topic, withDefault } from "../setting.js"

/** Where runs and logs go, and how the program names itself to the provider. */
export const outputTopic: Topic = {
  title: "Output",
  commands: ["ask", "batch", "serve", "models", "runs", "runs show", "resynth", "eval"]
}

/** The commands that call the provider, but `ask`, whose `--help` only names the attribution headers. */
const callingProvider: ReadonlyArray<CommandName> = ["batch", "serve", "models", "resynth", "eval"]

export const outputSettings = {
  outputDir: withDefault({
    field: "outputDir",
    kind: nonEmptyText,
    flag: "output-dir",
    commands: ["ask", "batch", "serve", "runs", "runs show", "resynth", "eval"],
    env: "PARALLEL_LLM_OUTPUT_DIR",
    doc: "Where run directories go",
    default: (ctx) => defaultOutputDir(ctx.env, process.platform, ctx.home),
    defaultDoc: "per-user data directory",
    convert: absolutePath
  }),
  logLevel: withDefault({
    field: "logLevel",
    kind: logLevel,
    flag: "log-level",
    env: "PARALLEL_LLM_LOG_LEVEL",
    doc: "Log level",
    default: "info" as const,
    defaultDoc: "`info`"
  }),
  logFile: optional({
    field: "logFile",
    kind: nonEmptyText,
    flag: "log-file",
    env: "PARALLEL_LLM_LOG_FILE",
    doc: "Log file (appended)",
    defaultDoc: "none",
    convert: absolutePath
  }),
  appUrl: withDefault({
    field: "appUrl",
    kind: url,
    flag: "app-url",
    commands: callingProvider,
    namedIn: ["ask"],
    env: "PARALLEL_LLM_APP_URL",
    doc: "HTTP-Referer attribution header sent to OpenRouter",
    default: "https://github.com/parallel-llm-mcp/parallel-llm-mcp",
    defaultDoc: "this project's URL"
  }),
  appTitle: withDefault({
    field: "appTitle",
    kind: headerText,
    flag: "app-title",
    commands: callingProvider,
    namedIn: ["ask"],
    env: "PARALLEL_LLM_APP_TITLE",
    doc: "X-Title attribution header sent to OpenRouter",
    default: "parallel-llm-mcp",
    defaultDoc: "`parallel-llm-mcp`"
  })
}
