// Model ids answered by a vendor's command-line agent run headless (`claude-code/sonnet`, `codex/`, `gemini-cli`),
// not by an HTTP API: the provider is src/services/providers/cliAgent/, the page docs/cli-agents.md.

export const CLI_AGENTS = ["claude-code", "codex", "gemini-cli"] as const
export type CliAgentName = (typeof CLI_AGENTS)[number]

/** A CLI agent's id taken apart: which CLI, and the model for its own model flag (none: the CLI's default). */
export interface CliAgentId {
  readonly cli: CliAgentName
  readonly model: string | undefined
}

/** The CLI agent a model id names (`claude-code`, `claude-code/`, `claude-code/sonnet`), or undefined for any other id. */
export const cliAgentOf = (id: string): CliAgentId | undefined => {
  for (const cli of CLI_AGENTS) {
    if (id === cli) return { cli, model: undefined }
    if (id.startsWith(`${cli}/`)) {
      const model = id.slice(cli.length + 1)
      return { cli, model: model === "" ? undefined : model }
    }
  }
  return undefined
}

export const isCliAgent = (id: string): boolean => cliAgentOf(id) !== undefined
