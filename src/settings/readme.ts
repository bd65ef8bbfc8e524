import type { AnySetting } from "./setting.js"
import { settingKeys, settingsTable } from "./table.js"

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
  const notes = [...(s.kind.flag === "list" ? ["array"] : []), ...(s.preset === true ? ["in presets too"] : [])]
  return `${code(key)}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`
}

/** The settings table of docs/configuration.md, generated from the declarations (test/docs.test.ts compares the two). */
export const settingsMarkdownTable = (): string =>
  [
    "| setting | flag | environment | config key | default |",
    "|---|---|---|---|---|",
    "| API key | — | `OPENROUTER_API_KEY` | — | required for OpenRouter's own URL; optional for any other server (sent when set) |",
    ...settingKeys.map((key) => {
      const s: AnySetting = settingsTable[key]
      return `| ${s.doc} | ${flagCell(s)} | ${envCell(s)} | ${keyCell(key, s)} | ${s.defaultDoc} |`
    }),
    "| Bearer token of `serve --http` (a secret: environment only) | — | `PARALLEL_LLM_HTTP_TOKEN` | — | " +
    "generated at start and printed once to stderr; required to listen beyond loopback |",
    "| Config file (JSON; relative paths in it are relative to the file) | `--config` | `PARALLEL_LLM_CONFIG` | — | " +
    "`~/.config/parallel-llm-mcp/config.json` when it exists (`$XDG_CONFIG_HOME`, macOS `~/Library/Application Support`, Windows `%APPDATA%`) |"
  ].join("\n")

/** A flag's `--help` text: the one-line doc, the default and the environment variable. */
export const helpText = (s: AnySetting): string =>
  `${s.doc}. Default: ${s.defaultDoc.replaceAll("`", "")}. [env ${s.env}${s.kind.flag === "list" ? ", comma-separated" : ""}]`
