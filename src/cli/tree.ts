import { askCli } from "./askCli.js"
import { batchCli } from "./batchCli.js"
import { configCli } from "./configCli.js"
import { evalCli } from "./evalCli.js"
import type { CommandHelp } from "./flags.js"
import { modelsCli } from "./modelsCli.js"
import { resynthCli } from "./resynthCli.js"
import { runsCli, showCli } from "./runsCli.js"
import { openCli } from "./runsOpenCli.js"
import { serveCli } from "./serveCli.js"

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
