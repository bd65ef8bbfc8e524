import { askCli } from "./askCommand.js"
import { batchCli } from "./batchCommand.js"
import { configCli } from "./configCommand.js"
import { evalCli } from "./evalCommand.js"
import type { CommandHelp } from "./flags.js"
import { modelsCli } from "./modelsCommand.js"
import { resynthCli } from "./resynthCommand.js"
import { runsCli, showCli } from "./runsCommand.js"
import { openCli } from "./runsOpenCommand.js"
import { serveCli } from "./serveCommand.js"

export const DESCRIPTION =
  "Ask several LLMs the same question at once through OpenRouter, keep every answer, and have a synthesizer merge them."

/** The commands as `--help` and the check of options know them: the tree of main.ts, as each command declares itself. */
export const helpTree: ReadonlyArray<CommandHelp> = [
  askCli.help,
  batchCli.help,
  serveCli.help,
  modelsCli.help,
  { ...runsCli.help, subcommands: [showCli.help, openCli.help] },
  resynthCli.help,
  evalCli.help,
  configCli.help
]
