import { SchemaAST } from "effect"
import { domainList, modelId, modelList, optionalModelList, originList, pathList, presetName, url } from "./kinds.js"
import { absolutePath, type AnySetting, secondsToMs } from "./setting.js"
import { settingKeys, settingsTable } from "./table.js"
import { tracingEnvironment } from "./table/tracing.js"

const code = (s: string) => `\`${s}\``

const flagCell = (s: AnySetting): string => {
  const names = `${code(`--${s.flag}`)}${s.alias !== undefined ? `/${code(`-${s.alias}`)}` : ""}`
  switch (s.kind.flag) {
    case "list":
      return `${names} (repeatable)`
    case "off":
      return `${names} to turn off`
    default:
      return names
  }
}

const envCell = (s: AnySetting): string => {
  switch (s.kind.flag) {
    case "list":
      return `${code(s.env)} (comma-separated)`
    case "off":
      return code(`${s.env}=false`)
    case "on":
      return code(`${s.env}=true`)
    default:
      return code(s.env)
  }
}

const keyCell = (key: string, s: AnySetting): string => {
  const notes = [
    ...(s.kind.flag === "list" ? ["array"] : []),
    ...(s.preset === true ? ["in presets too"] : []),
    // Marked `perCall` in the table: an MCP tool's argument of the same name (see docs/mcp.md).
    ...(s.mcp !== undefined ? ["per call too"] : [])
  ]
  return `${code(key)}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`
}

/**
 * What a layer above the settings completes a setting's doc with, by the setting's field: the strategies' names
 * and descriptions, from their registry (`docEndings` in cli/settingsOptions.ts).
 */
export type DocEndings = Readonly<Record<string, string>>

/** A setting's doc, completed where a layer above gives its ending: "How answers are combined: `synthesize` (merged), …". */
export const docOf = (s: AnySetting, endings: DocEndings): string =>
  Object.hasOwn(endings, s.field) ? `${s.doc}: ${endings[s.field]}` : s.doc

/** The settings table of docs/configuration.md, generated from the declarations (test/docs.test.ts compares the two). */
export const settingsMarkdownTable = (endings: DocEndings): string =>
  [
    "| setting | flag | environment | config key | default |",
    "|---|---|---|---|---|",
    "| API key | — | `OPENROUTER_API_KEY` | — | required for OpenRouter's own URL; optional for any other server (sent when set) |",
    ...settingKeys.map((key) => {
      const s: AnySetting = settingsTable[key]
      return `| ${docOf(s, endings)} | ${flagCell(s)} | ${envCell(s)} | ${keyCell(key, s)} | ${s.defaultDoc} |`
    }),
    "| Bearer token of `serve --http` (a secret: environment only) | — | `PARALLEL_LLM_HTTP_TOKEN` | — | " +
    "generated at start and printed once to stderr; required to listen beyond loopback |",
    ...tracingEnvironment.map((row) => `| ${row.doc} | — | ${code(row.env)} | — | ${row.defaultDoc} |`),
    "| Config file (JSON; relative paths in it are relative to the file) | `--config` | `PARALLEL_LLM_CONFIG` | — | " +
    "`~/.config/parallel-llm-mcp/config.json` when it exists (`$XDG_CONFIG_HOME`, macOS `~/Library/Application Support`, Windows `%APPDATA%`) |"
  ].join("\n")

// --- `--help` ---

/** What a value of these kinds is, as `--help` names it. */
const kindNames = new Map<unknown, string>([
  [modelId, "model-id"],
  [modelList, "model-id"],
  [optionalModelList, "model-id"],
  [url, "url"],
  [originList, "origin"],
  [pathList, "path"],
  [domainList, "domain"],
  [presetName, "name"]
])

/** The names a value may take (`low|medium|high`), when its schema is a few literals. */
const literalsOf = (ast: SchemaAST.AST): string | undefined => {
  const members = SchemaAST.isUnion(ast) ? ast.types : [ast]
  const names = members.flatMap((m) => (SchemaAST.isLiteral(m) && typeof m.literal === "string" ? [m.literal] : []))
  return names.length > 0 && names.length === members.length ? names.join("|") : undefined
}

/** How `--help` names a flag's value (`seconds`, `path`, `model-id`, `low|medium|high`); none for a switch. */
export const valueName = (s: AnySetting): string | undefined => {
  if (s.kind.flag === "on" || s.kind.flag === "off") return undefined
  if (s.convert === secondsToMs) return "seconds"
  if (s.convert === absolutePath) return "path"
  return literalsOf(s.kind.plain.ast) ?? kindNames.get(s.kind) ?? s.kind.flag
}

/** The environment variable as `--help` shows it: how a list or a switch is written there. */
export const envText = (s: AnySetting): string =>
  s.kind.flag === "list"
    ? `${s.env}, comma-separated`
    : s.kind.flag === "off"
    ? `${s.env}=false`
    : s.kind.flag === "on"
    ? `${s.env}=true`
    : s.env

/** The default as `--help` shows it (no Markdown). */
export const defaultText = (s: AnySetting): string => s.defaultDoc.replaceAll("`", "")

/** A flag's one-paragraph help text: the one-line doc, the default and the environment variable. */
export const helpText = (s: AnySetting, endings: DocEndings): string =>
  `${docOf(s, endings)}. Default: ${defaultText(s)}. [env ${envText(s)}]`
