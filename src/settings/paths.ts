import * as os from "node:os"
import * as path from "node:path"

/** This tool's per-user directory for data or configuration, by each platform's convention. */
const perUserDir = (
  kind: "data" | "config",
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
  home: string
): string => {
  const xdg = kind === "data" ? env.XDG_DATA_HOME : env.XDG_CONFIG_HOME
  const base = platform === "win32"
    ? (kind === "data" ? env.LOCALAPPDATA : env.APPDATA) ?? path.join(home, "AppData", kind === "data" ? "Local" : "Roaming")
    : platform === "darwin"
    ? path.join(home, "Library", "Application Support")
    : xdg && path.isAbsolute(xdg)
    ? xdg
    : path.join(home, ...(kind === "data" ? [".local", "share"] : [".config"]))
  return path.join(base, "parallel-llm-mcp")
}

/** The per-user data directory: never the working directory, which is where the original's runs collided. */
export const defaultOutputDir = (
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir()
): string => path.join(perUserDir("data", env, platform, home), "runs")

/** The config file read when no other is named: `~/.config/parallel-llm-mcp/config.json` or the platform's equivalent. */
export const defaultConfigFile = (
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir()
): string => path.join(perUserDir("config", env, platform, home), "config.json")

/**
 * OpenRouter's own API: the one base URL that needs a key, and the one whose model ids the default
 * fallback synthesizer names. Any other OpenAI-compatible server (Ollama, LM Studio, vLLM) gets neither.
 */
export const isOpenRouterUrl = (url: string): boolean => {
  const host = new URL(url).hostname
  return host === "openrouter.ai" || host.endsWith(".openrouter.ai")
}

/** Loopback servers: a key sent there in clear never leaves the machine. */
export const isLoopbackUrl = (url: string): boolean => {
  const host = new URL(url).hostname
  return host === "localhost" || host === "[::1]" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)
}
