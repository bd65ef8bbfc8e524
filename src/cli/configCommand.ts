import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { describeSettings, type SettingKey, settingNames } from "../services/Settings.js"
import { settingsFromOptions, settingsOptions } from "./settingsOptions.js"

// `describeSettings` names values by what they hold (timeoutMs); the sources are per user-facing setting.
const settingOfField: Partial<Record<string, SettingKey>> = {
  timeoutMs: "timeout",
  retryBaseDelayMs: "retryBaseDelay",
  deadlineMs: "deadline",
  synthesisReserveMs: "synthesisReserve",
  graceMs: "grace",
  mcpWaitMs: "mcpWait"
}

export const makeConfigCommand = () =>
  Command.make(
    "config",
    {
      json: Options.boolean("json").pipe(Options.withDescription("Print the settings and their sources as JSON.")),
      ...settingsOptions
    },
    (args) =>
      Effect.gen(function*() {
        const { settings, sources, configFlag } = yield* settingsFromOptions(args, { requireApiKey: false })
        const described = describeSettings(settings)
        const sourceOf = (field: string): string => {
          if (field === "apiKey") return Option.isSome(settings.apiKey) ? "env OPENROUTER_API_KEY" : "-"
          if (field === "configFile") {
            return Option.isNone(settings.configFile) ? "-" : configFlag !== undefined ? "flag --config" : process.env.PARALLEL_LLM_CONFIG ? "env PARALLEL_LLM_CONFIG" : "default location"
          }
          const key = settingOfField[field] ?? (field in settingNames ? (field as SettingKey) : undefined)
          if (key === undefined) return "-"
          switch (sources[key]) {
            case "flag":
              return `flag ${settingNames[key].flag}`
            case "env":
              return `env ${settingNames[key].env}`
            case "file":
              return `file ${Option.getOrElse(settings.configFile, () => "?")}`
            default:
              return "default"
          }
        }
        const rows = Object.entries(described).map(([field, value]) => ({ setting: field, value, source: sourceOf(field) }))
        if (args.json) {
          process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`)
          return
        }
        const show = (value: unknown) => (Array.isArray(value) ? value.join(", ") : value === null ? "-" : String(value))
        const width = (pick: (r: { setting: string; value: unknown; source: string }) => string) =>
          Math.max(...rows.map((r) => pick(r).length))
        const w1 = width((r) => r.setting)
        const w2 = Math.min(60, width((r) => show(r.value)))
        process.stdout.write(
          rows.map((r) => `${r.setting.padEnd(w1)}  ${show(r.value).padEnd(w2)}  ${r.source}`).join("\n") + "\n"
        )
      })
  ).pipe(
    Command.withDescription(
      "Print the effective settings and where each came from (flag, environment, config file, default). The API key is never shown."
    )
  )
