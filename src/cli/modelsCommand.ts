import { Effect, Either } from "effect"
import { listConfiguredModels } from "../programs/listConfiguredModels.js"
import type { CliAgentStatus } from "../services/providers/cliAgent/discovery.js"
import { Settings } from "../services/settings.js"
import { defineCommand, type ParsedArgs, switchFlag } from "./flags.js"
import { outcomeIf } from "./outcome.js"
import { writeStderr, writeStdout } from "./output.js"

const price = (usdPerMillion: number | undefined, variable: boolean | undefined) =>
  usdPerMillion !== undefined ? `$${usdPerMillion.toFixed(2)}` : variable === true ? "variable" : "-"

export const modelsCli = defineCommand("models", {
  summary: "Check the configured models against the provider",
  details: "The candidate models and synthesizers, and each preset's models, against the provider's model list: found " +
    "or not, context length, prices; and the CLI agents found on PATH, their versions and logins.",
  args: {},
  flags: {
    json: switchFlag({ name: "json", doc: "Print the list as JSON." })
  },
  settings: "models"
})

export const modelsCommand = modelsCli.command

/** The CLI agents found on PATH: version and login, as far as each CLI can say without a model call. */
const agentLines = (agents: ReadonlyArray<CliAgentStatus>): ReadonlyArray<string> => [
  "CLI agents (claude-code/…, codex/…, gemini-cli/…; docs/cli-agents.md):",
  ...agents.map((a) =>
    `  ${a.cli.padEnd(11)} ${
      !a.found
        ? `${a.executable} not on PATH`
        : `${a.executable} ${a.version ?? "?"}, ${
          a.loggedIn === undefined ? "login unknown" : a.loggedIn ? "logged in" : `not logged in (run \`${a.login}\`)`
        }`
    }`
  )
]

/** `models`: exit code 1 when the provider does not list a configured model. */
export const models = Effect.fn("models")(function*(args: ParsedArgs<typeof modelsCli>) {
  const settings = yield* Settings
  const listing = yield* listConfiguredModels()
  const everyModel = [...listing.models, ...listing.presets.flatMap((p) => p.models)]
  const outcome = outcomeIf(!everyModel.some((m) => m.found === false))
  if (args.json) {
    yield* writeStdout(JSON.stringify(listing, null, 2))
    return outcome
  }
  const rows = [
    ...listing.models.map((m) => [m.role, m] as const),
    ...listing.presets.flatMap((p) => p.models.map((m) => [`preset ${p.name}${p.active ? " (active)" : ""}`, m] as const))
  ].map(([role, m]) => [
    role,
    m.id,
    m.problem !== undefined
      ? `NOT READY (${m.problem})`
      : m.found === undefined
      ? "?"
      : m.found
      ? "found"
      : `NOT FOUND${m.suggestions?.length ? ` (did you mean ${m.suggestions.join(", ")}?)` : ""}`,
    m.contextLength?.toLocaleString("en-US") ?? "-",
    price(m.promptPrice, m.variablePrice),
    price(m.completionPrice, m.variablePrice)
  ])
  const header = ["role", "model", "status", "context", "in $/M", "out $/M"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  yield* writeStdout([line(header), ...rows.map(line), "", ...agentLines(listing.agents)].join("\n"))
  if (listing.offered !== undefined && Either.isRight(listing.catalogue)) {
    const more = listing.catalogue.right - listing.offered.length
    yield* writeStderr(
      `parallel-llm: ${settings.baseUrl} lists none of these; it has ${listing.offered.join(", ")}` +
        `${more > 0 ? ` and ${more} more` : ""} (choose with --model and --synthesizer)\n`
    )
  }
  if (Either.isLeft(listing.catalogue)) {
    yield* writeStderr(`parallel-llm: could not check against ${settings.baseUrl}/models: ${listing.catalogue.left}\n`)
  }
  return outcome
})
