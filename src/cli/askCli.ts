import { defineCommand, optionalArgument, repeatedFlag, switchFlag, textFlag } from "./flags.js"

// The command's declaration (options, arguments, help), apart from its handler in askCommand.ts: every start-up
// builds the command tree from the declarations, and loads a handler only when its command runs (runCli.ts).

export const askCli = defineCommand("ask", {
  summary: "Ask every candidate at once, then merge their answers",
  details: "The answer goes to stdout, progress and logs to stderr, every file of the run to its run directory.",
  args: {
    prompt: optionalArgument("prompt", "The prompt. Without it, --file or standard input is read.")
  },
  flags: {
    file: textFlag({ name: "file", alias: "f", value: "path", doc: "Read the prompt from this file." }),
    attach: repeatedFlag({
      name: "attach",
      value: "path",
      doc: "Attach a file, a directory (its text files, honouring .gitignore) or a glob. Text goes into the prompt, " +
        "images and PDFs as content parts."
    }),
    json: switchFlag({ name: "json", doc: "Print the run manifest with a `final` field (the answer) as JSON instead of the answer." }),
    continue: textFlag({
      name: "continue",
      value: "run-id",
      doc: "Ask a follow-up question of this run: every model is sent the conversation so far first."
    }),
    report: switchFlag({
      name: "report",
      doc: "After the answer, print the disagreement report: what the candidates agree on, contradict, or say alone."
    })
  },
  settings: "ask"
})
