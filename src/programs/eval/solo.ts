import { Effect, Ref } from "effect"
import { Settings } from "../../services/settings.js"
import type { SettingsValue } from "../../settings/values.js"
import { collectCandidates } from "../run/candidates.js"
import type { RunEvent } from "../run/request.js"
import { announceRun, startRun } from "../run/start.js"
import { finishRun } from "../runPipeline.js"

// The `synthesizer-alone` baseline: the synthesizer asked the question directly, as one candidate would be,
// with the same settings (temperature, max tokens, reasoning, its own options in the config file) and no web
// search (it never searches when it synthesizes). A normal run directory: its one answer is the final one,
// nothing is synthesized. The question a user pays to have answered: does the panel plus the synthesis beat
// the synthesizer alone?

/** The name of the baseline in the results file and the report (not a strategy: `--baselines solo` asks for it). */
export const SOLO = "synthesizer-alone"

/** The run's settings: the synthesizer as the one candidate, no web, no policy that could cut it short. */
export const soloSettings = (settings: SettingsValue): SettingsValue => ({
  ...settings,
  models: [settings.synthesizer],
  strategy: "synthesize",
  web: false,
  concurrency: 1,
  checkModels: false
})

/** One question put to the synthesizer alone; however it ends, the manifest says so (as runPipeline's). */
export const runSolo = (question: string, onEvent: (event: RunEvent) => Effect.Effect<void>) =>
  Effect.scopedWith((scope) =>
    Effect.gen(function*() {
      const settings = yield* Settings
      const started = yield* startRun({ prompt: question, onEvent }, scope)
      const steps = Effect.gen(function*() {
        yield* announceRun(started)
        const [outcome] = yield* collectCandidates(started)
        yield* Ref.update(started.state, (s) => ({
          ...s,
          alone: true,
          strategy: {
            name: "synthesize" as const,
            note: `${SOLO}: ${settings.synthesizer} asked the question directly, nothing synthesized`
          },
          ...(outcome?.content !== undefined ? { final: outcome.content } : {})
        }))
      })
      return yield* finishRun(started, steps)
    })
  ).pipe(Effect.provideServiceEffect(Settings, Effect.map(Settings, (s) => Settings.make(soloSettings(s)))))
