import { defineCommand, switchFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in modelsCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

export const modelsCli = defineCommand("models", {
  summary: "Check the configured models against the provider",
  details: "The candidate models and synthesizers, and each preset's models, against the provider's model list: found " +
    "or not, context length, prices; for a ~vendor/family-latest slug, the model it resolves to now where the list says; " +
    "and the CLI agents found on PATH, their versions and logins.",
  args: {},
  flags: {
    json: switchFlag({ name: "json", doc: "Print the list as JSON." })
  },
  settings: "models"
})
