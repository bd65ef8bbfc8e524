import type { RawSettings } from "../settings/values.js"
import { argument, defineCommand, integerFlagOr, switchFlag, textFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in batchCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

/** In `batch`, `--concurrency` is process-wide: the bound on HTTP calls in flight across all runs. */
const BATCH_DEFAULT_CONCURRENCY = 16
export const BATCH_DEFAULT_RUNS = 4

/**
 * `batch`'s own defaults: a process-wide concurrency, and warnings and errors only (every run's info
 * lines would drown the progress). A flag, the environment or the config file still wins.
 */
export const BATCH_DEFAULTS: RawSettings = { concurrency: String(BATCH_DEFAULT_CONCURRENCY), logLevel: "warning" }

export const batchCli = defineCommand("batch", {
  summary: "Run every prompt of a JSONL file, a few at a time",
  details: `With one bound on HTTP calls in flight for the whole batch (--concurrency, default ${BATCH_DEFAULT_CONCURRENCY}). ` +
    "Each prompt's result (id, runDir, status, cost) is appended to the results file as it ends; run again on the same " +
    "file to skip what is answered and retry the rest.",
  args: {
    file: argument(
      "FILE.jsonl",
      `One JSON object per line: {"id"?, "prompt", "models"?, "synthesizer"?}; the id defaults to the line number.`
    )
  },
  flags: {
    runs: integerFlagOr({ name: "runs", doc: "Runs (prompts) in flight at once." }, BATCH_DEFAULT_RUNS),
    waitLock: switchFlag({
      name: "wait-lock",
      doc: "When another batch is writing the same results file, wait for it to end instead of refusing."
    }),
    out: textFlag({
      name: "out",
      alias: "o",
      value: "path",
      doc: "The results file, one JSON line per prompt, appended as each ends (default: FILE.results.jsonl)."
    })
  },
  settings: "batch"
})
