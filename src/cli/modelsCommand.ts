import { Effect, Either } from "effect"
import { formatCount } from "../domain/format.js"
import { lastServedBy, type ServedBy } from "../programs/lastServedBy.js"
import { type ConfiguredModel, listConfiguredModels } from "../programs/listConfiguredModels.js"
import type { CliAgentStatus } from "../services/providers/cliAgent/discovery.js"
import { Settings } from "../services/settings.js"
import type { ParsedArgs } from "./flags.js"
import type { modelsCli } from "./modelsCli.js"
import { outcomeIf } from "./outcome.js"
import { writeStderr, writeStdout } from "./output.js"

const price = (usdPerMillion: number | undefined, variable: boolean | undefined) =>
  usdPerMillion !== undefined ? `$${usdPerMillion.toFixed(2)}` : variable === true ? "variable" : "-"

/**
 * A model's status: found or not, or `?` when the list could not be fetched. A `~…-latest` slug says what it
 * resolves to now, when the list says; else that each call resolves it (a run's `servedBy` then tells).
 */
const statusOf = (m: ConfiguredModel & { readonly lastServedBy?: ServedBy | undefined }, checked: boolean): string => {
  if (!checked) return "?"
  if (m.latest === true || m.resolvesTo !== undefined) {
    const now = m.resolvesTo !== undefined
      ? `→ ${m.resolvesTo}`
      : m.lastServedBy !== undefined
      ? `resolved at each call; last → ${m.lastServedBy.servedBy} (run ${m.lastServedBy.runId})`
      : "resolved at each call (servedBy in run.json)"
    return `${m.found === true ? "found" : "not listed"} ${now}`
  }
  if (m.found === true) return "found"
  return `NOT FOUND${m.suggestions?.length ? ` (did you mean ${m.suggestions.join(", ")}?)` : ""}`
}
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
  const listed = yield* listConfiguredModels()
  // A `~…-latest` slug whose target the list does not give: what answered for it in a recent run, if one did.
  const unresolved = (m: ConfiguredModel) => m.latest === true && m.resolvesTo === undefined
  const served = yield* lastServedBy([...listed.models, ...listed.presets.flatMap((p) => p.models)].filter(unresolved).map((m) => m.id))
  const withServed = (m: ConfiguredModel) => served.has(m.id) ? { ...m, lastServedBy: served.get(m.id) } : m
  const listing = {
    ...listed,
    models: listed.models.map(withServed),
    presets: listed.presets.map((p) => ({ ...p, models: p.models.map(withServed) }))
  }
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
    m.problem !== undefined ? `NOT READY (${m.problem})` : statusOf(m, Either.isRight(listing.catalogue)),
    m.contextLength !== undefined ? formatCount(m.contextLength) : "-",
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
