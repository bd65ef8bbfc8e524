import type { AnySetting, CommandName, Topic } from "./setting.js"
import { attachSettings, attachTopic } from "./table/attach.js"
import { modelSettings, modelTopic } from "./table/models.js"
import { outputSettings, outputTopic } from "./table/output.js"
import { runSettings, runTopic } from "./table/run.js"
import { serveSettings, serveTopic } from "./table/serve.js"
import { strategySettings, strategyTopic } from "./table/strategy.js"
import { tracingSettings, tracingTopic } from "./table/tracing.js"
import { webSettings, webTopic } from "./table/web.js"

/**
 * Every user-facing setting, declared once (in the files of ./table/, by topic; the order here is
 * the order of `config`, `get_config` and the README). The key is the config-file key; `field` names the
 * value the program reads (`const settings = yield* Settings` → `settings.timeoutMs`). The loader, the CLI
 * options, the config-file schema, `config`, `get_config`, the MCP per-call overrides and the README's table
 * all come from here. The API key (environment only, a secret) and the config file's own location are not
 * settings of this table.
 *
 * To add a setting: one entry in the file of ./table/ that fits its topic (`withDefault({...})` or
 * `optional({...})`, wrapped in `perCall(entry, {...})` when one MCP call may override it), then
 * `UPDATE_DOCS=1 npx vitest run test/docs.test.ts`; programs read it as `(yield* Settings).<field>`.
 */
export const settingsTable = {
  ...modelSettings,
  ...runSettings,
  ...webSettings,
  ...strategySettings,
  ...serveSettings,
  ...attachSettings,
  ...outputSettings,
  ...tracingSettings
}

export type SettingsTable = typeof settingsTable
export type SettingKey = keyof SettingsTable
export const settingKeys = Object.keys(settingsTable) as ReadonlyArray<SettingKey>

/** The topics, in the table's order, each with the keys of its settings: how `--help` groups the flags. */
const withKeys = (topic: Topic, settings: object) => ({ ...topic, keys: Object.keys(settings) as ReadonlyArray<SettingKey> })
export const settingTopics: ReadonlyArray<Topic & { readonly keys: ReadonlyArray<SettingKey> }> = [
  withKeys(modelTopic, modelSettings),
  withKeys(runTopic, runSettings),
  withKeys(webTopic, webSettings),
  withKeys(strategyTopic, strategySettings),
  withKeys(serveTopic, serveSettings),
  withKeys(attachTopic, attachSettings),
  withKeys(outputTopic, outputSettings),
  withKeys(tracingTopic, tracingSettings)
]

/**
 * Whether `command`'s `--help` only names the setting's flag (the setting's own `namedIn`, else its topic's): the
 * command takes it all the same.
 */
export const namedOnly = (command: CommandName, key: SettingKey): boolean => {
  const setting: AnySetting = settingsTable[key]
  const topic = settingTopics.find((t) => t.keys.includes(key))
  return (setting.namedIn ?? topic?.namedIn ?? []).includes(command)
}

/**
 * Whether `command` takes the setting's flag: the setting's own `commands`, else its topic's (a new setting
 * gets its topic's; give it `commands` when fewer use it), and those that only name it. The environment and the
 * config file reach every command.
 */
export const takesSetting = (command: CommandName, key: SettingKey): boolean => {
  const setting: AnySetting = settingsTable[key]
  const own = setting.commands
  const topic = settingTopics.find((t) => t.keys.includes(key))
  return (own ?? topic?.commands ?? []).includes(command) || namedOnly(command, key)
}
