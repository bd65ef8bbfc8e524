import { Schema } from "effect"
import { ReportMode } from "../../domain/report.js"
import { integerIn, modelList, nonEmptyText, oneOf } from "../kinds.js"
import { optional, perCall, type Topic, withDefault } from "../setting.js"

/** How a run aggregates its candidates' answers (see src/programs/strategies/ and the README's Strategies). */
export const strategyTopic: Topic = { title: "Strategy", commands: ["ask", "batch", "serve", "resynth", "eval"] }

export const strategySettings = {
  strategy: perCall(
    withDefault({
      field: "strategy",
      preset: true,
      // A strategy's name: the strategies are the registry's, above the settings (src/programs/strategies/registry.ts),
      // which checks the name where the settings are read (cli/settingsOptions.ts), the MCP argument's schema
      // (mcp/tools/processPrompt.ts) and again where a run is planned; `--help` and the docs complete this doc with
      // their names and descriptions (`docEndings`, cli/settingsOptions.ts).
      kind: nonEmptyText,
      flag: "strategy",
      // `eval` names its strategies with `--strategies`.
      commands: ["ask", "batch", "serve", "resynth"],
      env: "PARALLEL_LLM_STRATEGY",
      doc: "How answers are combined",
      default: "synthesize",
      defaultDoc: "synthesize"
    }),
    { description: "How answers are combined." }
  ),
  judge: optional({
    field: "judges",
    preset: true,
    kind: modelList,
    flag: "judge",
    env: "PARALLEL_LLM_JUDGE",
    doc: "With `rank`: the models that rank the answers",
    defaultDoc: "the candidate models"
  }),
  rounds: perCall(
    withDefault({
      field: "rounds",
      preset: true,
      kind: integerIn(1, 5),
      flag: "rounds",
      env: "PARALLEL_LLM_ROUNDS",
      doc: "With `refine`: rounds in which every candidate improves on all the previous round's answers",
      default: 1,
      defaultDoc: "1"
    }),
    { description: "For refine: rounds." }
  ),
  reportVia: withDefault({
    field: "reportVia",
    preset: true,
    kind: oneOf(Schema.compose(Schema.Trim, ReportMode), ReportMode),
    flag: "report-via",
    env: "PARALLEL_LLM_REPORT_VIA",
    doc: "Report: `text` after the answer, `structured` (JSON), or `off`",
    default: "text" as const,
    defaultDoc: "`text`"
  }),
  samples: perCall(
    withDefault({
      field: "samples",
      preset: true,
      kind: integerIn(1, 64),
      flag: "samples",
      // A re-synthesis has its samples already.
      commands: ["ask", "batch", "serve", "eval"],
      env: "PARALLEL_LLM_SAMPLES",
      doc: "With `self`: answers sampled from the one model (at most --max-models)",
      default: 4,
      defaultDoc: "4"
    }),
    { description: "For self: answers sampled.", max: 16 }
  )
}
