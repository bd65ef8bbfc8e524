import { Option } from "effect"
import { headerCharacterProblem } from "./headerCharacters.js"
import type { SettingKey } from "./table.js"
import type { PresetValues, SettingsValue } from "./values.js"

// Checks that need more than one value, made once every setting is read: what each kind cannot see alone.
// Each returns one line naming where the value came from, or undefined when all is well.

/** What a key may hold: visible ASCII (an HTTP header carries no other character, and no key has a space). */
const KEY_CHARACTER = /^[\x21-\x7E]$/

/**
 * The key, already trimmed (a trailing newline from `$(cat file)` or an env file is not part of it): refused when
 * it holds a character no HTTP header can carry, which would otherwise fail every call as a network error.
 */
export const apiKeyProblem = (key: string): string | undefined => {
  const problem = headerCharacterProblem(key, KEY_CHARACTER)
  return problem === undefined
    ? undefined
    : `OPENROUTER_API_KEY ${problem}; it is not a key as issued (\`sk-or-v1-…\` in examples is a placeholder): ` +
      `copy it again from https://openrouter.ai/keys`
}

/** Keys shorter than this could be part of an ordinary model id: only an id equal to them is refused. */
const SHORTEST_KEY_SEARCHED = 16

/** Whether a model id is (or holds) the API key: a key pasted into the wrong variable, which would be printed and stored. */
export const isKeyInModelId = (id: string, key: string | undefined): boolean =>
  key !== undefined && key !== "" && (id === key || (key.length >= SHORTEST_KEY_SEARCHED && id.includes(key)))

/** The refusal of a model id that is the key: it names the place, never the id. */
export const keyAsModelMessage = (where: string, position?: number): string =>
  `${where}: ${position === undefined ? "the model id" : `model ${position}`} is the API key (OPENROUTER_API_KEY), ` +
  `not a model id; it is not printed or stored: name a model such as openai/gpt-5 instead`

/** The first model named twice in a list, if any. */
export const firstDuplicate = (models: ReadonlyArray<string>): string | undefined => models.find((m, i) => models.indexOf(m) !== i)

/** The refusal of a model named twice: every mention would be asked, and paid for. */
export const duplicateModelMessage = (where: string, model: string): string =>
  `${where}: ${model} is named twice; name each model once (every mention would be asked, and paid for)`

/** A list of models as the checks see it: where it came from, and what it holds. */
interface NamedList {
  readonly where: string
  readonly models: ReadonlyArray<string>
  /** Whether `--max-models` bounds it (the candidates are bounded when a run starts, with the call's own list). */
  readonly capped: boolean
  readonly what: string
}

/** The problem of one list: the key in it, a duplicate, or more models than a run may call. */
const listProblem = (list: NamedList, key: string | undefined, maxModels: number): string | undefined => {
  const keyAt = list.models.findIndex((m) => isKeyInModelId(m, key))
  if (keyAt >= 0) return keyAsModelMessage(list.where, list.models.length > 1 ? keyAt + 1 : undefined)
  const twice = firstDuplicate(list.models)
  if (twice !== undefined) return duplicateModelMessage(list.where, twice)
  if (list.capped && list.models.length > maxModels) {
    return `${list.where}: ${list.models.length} ${list.what}, more than the ${maxModels} allowed in one run (--max-models)`
  }
  return undefined
}

/** The lists of models a set of settings (the top level, or one preset over it) names. */
const listsOf = (values: PresetValues, where: (key: SettingKey) => string): ReadonlyArray<NamedList> => [
  ...(values.models ? [{ where: where("models"), models: values.models, capped: false, what: "candidate models" }] : []),
  ...(values.synthesizer !== undefined ? [{ where: where("synthesizer"), models: [values.synthesizer], capped: false, what: "" }] : []),
  ...(values.fallbackSynthesizers
    ? [{ where: where("fallbackSynthesizers"), models: values.fallbackSynthesizers, capped: true, what: "fallback synthesizers" }]
    : []),
  ...(values.judges && Option.isSome(values.judges)
    ? [{ where: where("judge"), models: values.judges.value, capped: true, what: "judges" }]
    : [])
]

/**
 * The settings' lists of models, the top level's and every preset's: none may hold the API key or name a model
 * twice, and judges and fallbacks are bounded by `--max-models` as the candidates are.
 */
export const modelListsProblem = (
  settings: SettingsValue,
  key: string | undefined,
  describe: (key: SettingKey) => string
): { readonly where: string; readonly message: string } | undefined => {
  const file = Option.getOrElse(settings.configFile, () => "the config file")
  const lists: ReadonlyArray<NamedList> = [
    ...listsOf(settings, describe),
    ...Object.entries(settings.presets).flatMap(([name, preset]) => listsOf(preset, (k) => `presets.${name}.${k} (in ${file})`)),
    ...Object.entries(settings.modelOptions).flatMap(([id, options]) => [
      { where: `a model object (in ${file})`, models: [id], capped: false, what: "" },
      ...(options.fallbacks
        ? [{
          where: `the fallbacks of ${isKeyInModelId(id, key) ? "a model" : id} (in ${file})`,
          models: options.fallbacks,
          capped: true,
          what: "fallbacks"
        }]
        : [])
    ])
  ]
  for (const list of lists) {
    const problem = listProblem(list, key, settings.maxModels)
    if (problem !== undefined) return { where: list.where, message: problem }
  }
  return undefined
}
