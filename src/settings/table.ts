import { attachSettings } from "./table/attach.js"
import { modelSettings } from "./table/models.js"
import { outputSettings } from "./table/output.js"
import { runSettings } from "./table/run.js"
import { serveSettings } from "./table/serve.js"
import { strategySettings } from "./table/strategy.js"

export { DEFAULT_BASE_URL, DEFAULT_FALLBACK_SYNTHESIZERS, DEFAULT_MODELS, DEFAULT_SYNTHESIZER } from "./table/models.js"

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
  ...strategySettings,
  ...serveSettings,
  ...attachSettings,
  ...outputSettings
}

export type SettingsTable = typeof settingsTable
export type SettingKey = keyof SettingsTable
export const settingKeys = Object.keys(settingsTable) as ReadonlyArray<SettingKey>
