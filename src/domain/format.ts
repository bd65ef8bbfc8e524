import { Either } from "effect"
import type { Manifest, RunUsage, Usage } from "./manifest.js"
import { stripControl } from "./text.js"

// How figures read in every human line (stderr, logs, runs show, MCP summaries): one place, so they agree.

/** "41.2 s" */
export const formatSeconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/**
 * "1,234": the same separators on every machine, whatever its locale, as `Intl.NumberFormat("en-US")` writes them
 * (at most three decimals). Grouped by hand: a process's first `Intl` formatter loads ICU's locale data, 20 to 60 ms
 * of CPU, more than the rest of an `ask`'s summary line costs (the CLI's start-up).
 */
export const formatCount = (n: number): string => {
  const abs = Math.abs(n)
  // Not a count: NaN, infinities and numbers toFixed cannot write out.
  if (!(abs < 1e21)) return new Intl.NumberFormat("en-US").format(n)
  const [whole = "", fraction] = abs.toFixed(3).replace(/\.?0+$/, "").split(".")
  return `${n < 0 || Object.is(n, -0) ? "-" : ""}${whole.replace(/\B(?=(\d{3})+$)/g, ",")}${fraction === undefined ? "" : `.${fraction}`}`
}

/** "$0.0123": to a hundredth of a cent, as per-call costs are that small. */
export const formatBytes = (n: number): string => `${formatCount(n)} bytes`

export const formatUsd = (usd: number): string => `$${usd.toFixed(4)}`

/**
 * A sum of costs rounded to 1e-10 USD. OpenRouter's costs and per-token prices have at most 10 decimals
 * (`"0.0000000375"`), so nothing real is lost, and the float noise of a sum (`0.00030000000000000003`) is.
 */
export const roundUsd = (usd: number): number => Number(usd.toFixed(10))

/** "$1.50" for budgets and estimates; under a cent, as `formatUsd`. */
export const formatBudget = (usd: number): string => (usd < 0.01 ? formatUsd(usd) : `$${usd.toFixed(2)}`)

/** "1 answer", "3 answers" */
export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/** "2/3": candidates that answered, out of all. */
export const answeredOf = (manifest: Pick<Manifest, "candidates">): string =>
  `${manifest.candidates.filter((c) => c.status === "ok").length}/${manifest.candidates.length}`

export const tokensOf = (usage: Usage): number => usage.promptTokens + usage.completionTokens

/** A run's tokens; undefined when no call reported any. */
const runTokenCount = (usage: RunUsage): number | undefined =>
  usage.promptTokens === undefined && usage.completionTokens === undefined
    ? undefined
    : (usage.promptTokens ?? 0) + (usage.completionTokens ?? 0)

/**
 * What calls cost: "$0.0123", or "cost unknown" when the provider did not report it (never shown as $0);
 * nothing for calls that used no tokens.
 */
export const costOf = (usage: Usage | RunUsage): string | undefined =>
  usage.cost !== undefined
    ? `${formatUsd(usage.cost)}${costIncomplete(usage) ? " + unknown" : ""}`
    : (usage.promptTokens ?? 0) + (usage.completionTokens ?? 0) > 0
    ? "cost unknown"
    : undefined

/** Some of the tokens are estimates (a billed call that reported nothing): the cost leaves them out. */
const costIncomplete = (usage: Usage | RunUsage): boolean =>
  ("estimatedCalls" in usage && (usage.estimatedCalls ?? 0) > 0) || ("estimated" in usage && usage.estimated === true)

/** "1,234 tokens"; "tokens unknown" when no call reported usage; the calls that did not, when some did. */
const runTokens = (usage: RunUsage): string => {
  const unreported = usage.unreportedCalls ?? 0
  const tokens = runTokenCount(usage)
  // A manifest written before tokens could be absent says 0 for them, with the calls that reported none.
  if (tokens === undefined || (tokens === 0 && unreported > 0)) return "tokens unknown"
  const estimated = usage.estimatedCalls ?? 0
  return `${formatCount(tokens)} tokens${estimated > 0 ? ` (${plural(estimated, "call")} estimated)` : ""}` +
    `${unreported > 0 ? ` (+ ${plural(unreported, "call")} unreported)` : ""}`
}

/** What a strategy's own step did: "rank: 3/4 rankings counted", and why it fell back, if it did. */
export interface StrategySteps {
  readonly name: string
  readonly done: number
  readonly of: number
  readonly text: string
  readonly degraded: string | undefined
}

/** What a strategy other than `synthesize` did, for the summary: " · rank: 3/4 rankings counted (degraded: …)". */
const strategyNote = (steps: StrategySteps | undefined): string => {
  if (steps === undefined) return ""
  return ` · ${steps.text}${steps.degraded !== undefined ? ` (degraded: ${stripControl(steps.degraded)})` : ""}`
}

/**
 * The one-line summary of a finished run (stderr of ask and resynth, `runs show`), with what its strategy's step
 * did (`strategySteps` of src/programs/strategies/registry.ts, which knows each strategy's record).
 */
export const summaryLine = (manifest: Manifest, runDir: string, steps: StrategySteps | undefined): string => {
  const cost = costOf(manifest.usage)
  return `parallel-llm: ${manifest.status} · ${answeredOf(manifest)} answered${strategyNote(steps)} · ` +
    `${formatSeconds(manifest.durationMs)} · ${runTokens(manifest.usage)}${cost !== undefined ? ` · ${cost}` : ""} · ${runDir}`
}

/** A finished model call as formatting needs it (a `ModelCall` of the programs fits). */
export interface CallFigures {
  readonly result: Either.Either<{ readonly usage?: Usage | undefined }, { readonly message: string }>
  readonly attempts: number
  readonly latencyMs: number
}

/** A human line for a finished call: "answered in 41.2 s (1,234 tokens, $0.0123)". */
export const describeCall = (call: CallFigures): string =>
  Either.match(call.result, {
    onRight: (c) => {
      const cost = c.usage === undefined ? undefined : costOf(c.usage)
      const tokens = c.usage === undefined ? "tokens unknown" : `${formatCount(tokensOf(c.usage))} tokens`
      return `answered in ${formatSeconds(call.latencyMs)} (${tokens}` +
        `${cost !== undefined ? `, ${cost}` : ""}${call.attempts > 1 ? `, ${call.attempts} attempts` : ""})`
    },
    onLeft: (e) => `failed after ${formatSeconds(call.latencyMs)} and ${plural(call.attempts, "attempt")}: ${e.message}`
  })
