import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { configRows } from "../settings/describe.js"
import { succeeded } from "./outcome.js"
import { settingsFromFlags, settingsOptions } from "./settingsOptions.js"

const configOptions = {
  json: Options.boolean("json").pipe(Options.withDescription("Print the settings and their sources as JSON.")),
  ...settingsOptions
}

export const configCommand = Command.make("config", configOptions).pipe(
  Command.withDescription(
    "Print the effective settings and where each came from (flag, environment, config file, default). The API key is never shown."
  )
)

/** `config`: reads the settings itself (it shows their sources), and needs no other service. */
export const config = Effect.fn("config")(function*(args: Command.Command.ParseConfig<typeof configOptions>) {
  const { settings, sources, configFlag } = yield* settingsFromFlags(args, { requireApiKey: false })
  const configFileSource = Option.isNone(settings.configFile)
    ? "-"
    : configFlag !== undefined
    ? "flag --config"
    : process.env.PARALLEL_LLM_CONFIG
    ? "env PARALLEL_LLM_CONFIG"
    : "default location"
  const rows = configRows(settings, sources, configFileSource)
  if (args.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`)
    return succeeded
  }
  const show = (value: unknown) =>
    Array.isArray(value)
      ? value.join(", ")
      : value === null
      ? "-"
      : typeof value === "object"
      ? (Object.keys(value).length === 0 ? "-" : JSON.stringify(value))
      : String(value)
  const w1 = Math.max(...rows.map((r) => r.setting.length))
  const w2 = Math.min(60, Math.max(...rows.map((r) => show(r.value).length)))
  process.stdout.write(rows.map((r) => `${r.setting.padEnd(w1)}  ${show(r.value).padEnd(w2)}  ${r.source}`).join("\n") + "\n")
  return succeeded
})
