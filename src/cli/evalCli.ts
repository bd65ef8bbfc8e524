import { builtinDatasets } from "../programs/eval/builtinDatasets.js"
import { strategyNames } from "../programs/strategies/registry.js"
import { BATCH_DEFAULT_RUNS } from "./batchCli.js"
import { choiceFlag, defineCommand, integerFlag, integerFlagOr, optionalArgument, switchFlag, textFlag, textFlagOr } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in evalCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

export const evalCli = defineCommand("eval", {
  summary: "Score strategies on a dataset with known answers",
  details: "With frozen candidate answers only the aggregation is paid for, and the baselines (best single candidate, " +
    "majority vote, oracle) cost nothing. Every run is a normal run directory; results are appended to a results " +
    "file, so running again resumes. On OpenRouter, --cache makes a rerun's identical calls free within its TTL.",
  args: {
    file: optionalArgument(
      "FILE.jsonl",
      `A dataset: one JSON object per line, {"question", "answer", "candidates"?: {model: answer}, "id"?}.`
    )
  },
  flags: {
    dataset: textFlag({
      name: "dataset",
      value: "name|path",
      doc: `A built-in dataset (${Object.keys(builtinDatasets).join(", ")}) or a dataset file.`
    }),
    strategies: textFlagOr({
      name: "strategies",
      value: "names",
      doc: `Strategies to measure, comma-separated (known: ${strategyNames.join(", ")}).`
    }, "synthesize"),
    scorer: choiceFlag({
      name: "scorer",
      doc: "How an answer is judged right (default: the dataset's; numeric for a file): the final number, the final " +
        "answer's text, a regular expression (the `answer`) found in the response, or a choice letter A-J."
    }, ["numeric", "exact", "regex", "choice"]),
    limit: integerFlag({ name: "limit", doc: "Only the first N items (after --sample)." }),
    sample: integerFlag({ name: "sample", doc: "N items drawn at random (see --seed), kept in dataset order." }),
    seed: integerFlagOr({ name: "seed", doc: "Seed of --sample: the same seed draws the same items." }, 1),
    baselinesOnly: switchFlag({
      name: "baselines-only",
      doc: "Only the baselines, no strategy: the frozen candidates' (best single, majority vote, oracle: no call, no API " +
        "key), and the synthesizer alone if --baselines solo says so."
    }),
    baselines: choiceFlag({
      name: "baselines",
      doc: "The paid baseline: solo asks the synthesizer each question alone, with the same settings (default: solo when an " +
        "API key is set, except with --baselines-only); none asks nothing more. The candidates' baselines are always given."
    }, ["solo", "none"]),
    runs: integerFlagOr({ name: "runs", doc: "Runs in flight at once." }, BATCH_DEFAULT_RUNS),
    waitLock: switchFlag({
      name: "wait-lock",
      doc: "When another process is writing the same results file, wait for it to end instead of refusing."
    }),
    out: textFlag({
      name: "out",
      alias: "o",
      value: "path",
      doc: "The results file, one JSON line per run, appended as each ends (default: FILE.eval.jsonl, or NAME.eval.jsonl here)."
    }),
    json: switchFlag({ name: "json", doc: "Print the report as JSON instead of a Markdown table." }),
    plot: textFlag({
      name: "plot",
      value: "FILE.svg",
      doc: "Also draw accuracy against cost per item, with intervals, one point per baseline and strategy, as an SVG file."
    })
  },
  settings: "eval"
})
