import { defineCommand, switchFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in configCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

// `config` takes every setting's flag: it shows what a command line would set, and where each value came from.
export const configCli = defineCommand("config", {
  summary: "Print the effective settings and their sources",
  details: "Sources: flag, environment, config file, preset, default. The API key is never shown. Every setting's flag " +
    "is taken, to show what it would set.",
  args: {},
  flags: {
    json: switchFlag({ name: "json", doc: "Print the settings and their sources as JSON." })
  },
  settings: "all"
})
