import { Effect, Option } from "effect"
import { ProcessIo } from "../services/processIo.js"
import { configRows } from "../settings/describe.js"
import type { configCli } from "./configCli.js"
import type { ParsedArgs } from "./flags.js"
import { succeeded } from "./outcome.js"
import { writeStdout } from "./output.js"
import { settingsFromFlags } from "./settingsOptions.js"

/** `config`: reads the settings itself (it shows their sources), and needs no other service. */
export const config = Effect.fn("config")(function*(args: ParsedArgs<typeof configCli>) {
  const { settings, sources, configFlag } = yield* settingsFromFlags(args.settings, { requireApiKey: false })
  const configFileSource = Option.isNone(settings.configFile)
    ? "-"
    : configFlag !== undefined
    ? "flag --config"
    : (yield* ProcessIo).env.PARALLEL_LLM_CONFIG
    ? "env PARALLEL_LLM_CONFIG"
    : "default location"
  const rows = configRows(settings, sources, configFileSource)
  if (args.json) {
    yield* writeStdout(JSON.stringify(rows, null, 2))
    return succeeded
  }
  // `modelOptions` (an object by model id) takes a line per model: the first names the setting and its source.
  const lines = rows.flatMap((r): ReadonlyArray<{ setting: string; value: string; source: string }> => {
    const value = r.value
    if (Array.isArray(value)) return [{ ...r, value: value.join(", ") }]
    if (value === null || typeof value !== "object") return [{ ...r, value: value === null ? "-" : String(value) }]
    const entries = Object.entries(value)
    return entries.length === 0
      ? [{ ...r, value: "-" }]
      : entries.map(([id, options], i) => ({
        setting: i === 0 ? r.setting : "",
        value: `${id} ${JSON.stringify(options)}`,
        source: i === 0 ? r.source : ""
      }))
  })
  const w1 = Math.max(...lines.map((l) => l.setting.length))
  const w2 = Math.min(60, Math.max(...lines.map((l) => l.value.length)))
  yield* writeStdout(lines.map((l) => `${l.setting.padEnd(w1)}  ${l.value.padEnd(w2)}  ${l.source}`.trimEnd()).join("\n"))
  return succeeded
})
