import type { HelpDoc } from "@effect/cli"
import type { Span } from "@effect/cli/HelpDoc/Span"
import { editDistance } from "../domain/text.js"
import type { AnySetting } from "../settings/setting.js"
import { namedOnly, settingsTable, settingTopics } from "../settings/table.js"
import type { FlagHelp } from "./flagHelp.js"
import type { CommandHelp } from "./flags.js"
import { configFlagHelp, settingFlagHelp, settingKeysOf } from "./settingsOptions.js"

// `--help`, rendered from the declarations (each command's own options, and the settings table for the
// settings it takes), and the check of a command line's options against them. @effect/cli parses the rest;
// its own help (every option in six lines, the usage on one line of thousands of columns) is not used.

const BIN = "parallel-llm"

/** The help's width: the terminal's (or $COLUMNS, as the caller finds them), between 60 and 100 columns; 80 when unknown. */
const helpWidth = (columns: number | undefined) => Math.min(100, Math.max(60, columns ?? 80))

/** `text` in lines of at most `width` columns: the first after `first`, the others indented by `indent`. */
const wrap = (text: string, width: number, indent: number, first = ""): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = first
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    const fresh = line === "" || line.endsWith(" ")
    if (!fresh && line.length + 1 + word.length > width) {
      lines.push(line)
      line = `${" ".repeat(indent)}${word}`
    } else line = fresh ? `${line}${word}` : `${line} ${word}`
  }
  return [...lines, line]
}

const sentence = (doc: string) => (/[.!?]$/.test(doc) ? doc : `${doc}.`)

/** One option: its names and value, then what it does, its notes in brackets, wrapped under it. */
const entry = (h: FlagHelp, width: number): ReadonlyArray<string> =>
  wrap(
    `${h.doc.replaceAll("`", "")}${h.notes.map((n) => ` [${n}]`).join("")}`,
    width,
    4,
    `  ${h.names}${h.value === "" ? "" : ` ${h.value}`}  `
  )

const section = (title: string, lines: ReadonlyArray<string>): ReadonlyArray<string> => (lines.length === 0 ? [] : ["", title, ...lines])

const helpFlag: FlagHelp = { names: "-h, --help", value: "", doc: "Show this help", notes: [], takesValue: false }

/** Each topic of the table with the settings `help` takes a flag for, `named` ones or those it describes in full. */
const topicsOf = (help: CommandHelp, named: boolean) => {
  const keys = settingKeysOf(help.settings).filter((key) => help.settings === "all" || namedOnly(help.settings, key) === named)
  return settingTopics.flatMap((topic) => {
    const settings = topic.keys.filter((key) => keys.includes(key)).map((key): AnySetting => settingsTable[key])
    return settings.length === 0 ? [] : [{ title: topic.title, settings }]
  })
}

/** Flags by name only, a line (or more) per topic: `config`'s whole list, and the settings a command only names. */
const namesByTopic = (topics: ReturnType<typeof topicsOf>, width: number) =>
  topics.flatMap(({ settings, title }) => wrap(settings.map((s) => `--${s.flag}`).join(" "), width, 4, `  ${title.toLowerCase()}: `))

/**
 * A command's settings: each flag in full, then those it only names (documented in `config --help`'s commands
 * and docs/configuration.md); for `config`, which takes them all, their names by topic.
 */
const settingsSections = (help: CommandHelp, width: number): ReadonlyArray<string> =>
  help.settings === "all"
    ? section("Settings (each as the --help of a command that takes it says):", namesByTopic(topicsOf(help, false), width))
    : [
      ...topicsOf(help, false).flatMap(({ settings, title }) =>
        section(`${title} settings [default; environment variable]:`, settings.flatMap((s) => entry(settingFlagHelp(s), width)))
      ),
      ...section("More settings (described in docs/configuration.md):", namesByTopic(topicsOf(help, true), width))
    ]

/** The usage line: the command's own options in brackets (a repeatable one followed by `...`), then its arguments. */
const usage = (help: CommandHelp, width: number): ReadonlyArray<string> => {
  const own = help.flags.map((f) => {
    const name = f.names.split(", ").at(-1)
    const value = f.value.replace(/\.\.\.$/, "")
    return `[${name}${value === "" ? "" : ` ${value}`}]${f.value.endsWith("...") ? "..." : ""}`
  })
  const sub = help.subcommands.length > 0 ? ["[<command>]"] : []
  const words = [...sub, ...own, "[settings]", ...help.args.map((a) => a.names)]
  const first = `Usage: ${BIN} ${help.path} `
  return wrap(words.join(" "), width, first.length, first)
}

/** `parallel-llm <command> --help`. */
export const commandHelp = (help: CommandHelp, columns?: number): string => {
  const width = helpWidth(columns)
  return [
    ...usage(help, width),
    "",
    ...wrap(`${sentence(help.summary)} ${help.details}`.replaceAll("`", ""), width, 0),
    ...section("Commands:", help.subcommands.flatMap((c) => entry(commandLine(c), width))),
    ...section("Arguments:", help.args.flatMap((a) => entry(a, width))),
    ...section("Options:", [...help.flags, configFlagHelp, helpFlag].flatMap((f) => entry(f, width))),
    ...settingsSections(help, width),
    ""
  ].join("\n")
}

const commandLine = (c: CommandHelp): FlagHelp => ({
  names: [c.path.split(" ").at(-1), ...c.args.map((a) => a.names)].join(" "),
  value: "",
  doc: c.summary,
  notes: [],
  takesValue: false
})

/** `parallel-llm --help`: the commands, one line each, and where to look next. */
export const rootHelp = (
  commands: ReadonlyArray<CommandHelp>,
  about: { readonly version: string; readonly description: string },
  columns?: number
): string => {
  const width = helpWidth(columns)
  const all = commands.flatMap((c) => [c, ...c.subcommands])
  const column = Math.max(...all.map((c) => [c.path, ...c.args.map((a) => a.names)].join(" ").length)) + 6
  const line = (c: CommandHelp) => wrap(c.summary, width, column, `  - ${[c.path, ...c.args.map((a) => a.names)].join(" ")}`.padEnd(column))
  return [
    `${BIN} ${about.version}`,
    ...wrap(about.description, width, 0),
    "",
    `Usage: ${BIN} <command> [options]`,
    "",
    "Commands:",
    ...all.flatMap(line),
    "",
    "Options:",
    ...[
      { ...helpFlag, doc: `Show this help; ${BIN} <command> --help shows a command's options and settings` },
      { names: "--version", value: "", doc: "Print the version", notes: [], takesValue: false },
      { names: "--completions", value: "<sh|bash|fish|zsh>", doc: "Print a shell completion script", notes: [], takesValue: true }
    ].flatMap((f) => entry(f, width)),
    "",
    ...wrap(
      "Settings come from flags, then the environment, then the config file (--config), then defaults; " +
        `${BIN} config shows each one's value and source.`,
      width,
      0
    ),
    ""
  ].join("\n")
}

// --- The command line against the declarations ---

const isOption = (word: string) => /^--?[A-Za-z]/.test(word)

/** The options @effect/cli itself takes on every command (`--log-level` is taken off before, in main.ts). */
const builtIns: ReadonlyArray<FlagHelp> = [
  helpFlag,
  { names: "--version", value: "", doc: "", notes: [], takesValue: false },
  { names: "--wizard", value: "", doc: "", notes: [], takesValue: false },
  { names: "--completions", value: "<shell>", doc: "", notes: [], takesValue: true },
  { names: "--log-level", value: "<level>", doc: "", notes: [], takesValue: true }
]

// Each command's options, made once per process: every command line looked them up twice, each time writing out the
// help of every setting flag the command takes (most of a millisecond of CPU at every start).
const optionsByCommand = new Map<CommandHelp | undefined, ReadonlyMap<string, boolean>>()

/** Every option `help`'s command takes, by name (`--file`, `-f`): whether it reads the next word as its value. */
const optionsOf = (help: CommandHelp | undefined): ReadonlyMap<string, boolean> => {
  const known = optionsByCommand.get(help)
  if (known !== undefined) return known
  const settings = help === undefined ? [] : settingKeysOf(help.settings).map((key) => settingFlagHelp(settingsTable[key]))
  const flags = [...builtIns, ...(help === undefined ? [] : [...help.flags, ...settings, configFlagHelp])]
  const options = new Map(flags.flatMap((f) => f.names.split(", ").map((name) => [name, f.takesValue] as const)))
  optionsByCommand.set(help, options)
  return options
}

/** The words before `--` that are not options or their values, with their positions. */
const positionals = (words: ReadonlyArray<string>, options: ReadonlyMap<string, boolean>) => {
  const found: Array<{ readonly word: string; readonly at: number }> = []
  for (let i = 0; i < words.length && words[i] !== "--"; i++) {
    const word = words[i]!
    if (!isOption(word)) found.push({ word, at: i })
    else if (options.get(word) === true) i++
  }
  return found
}

/** The command a command line names (`runs show` inside `runs`), and the words after it; none for the root. */
export const commandOf = (
  commands: ReadonlyArray<CommandHelp>,
  words: ReadonlyArray<string>
): { readonly help: CommandHelp | undefined; readonly rest: ReadonlyArray<string> } => {
  const top = commands.find((c) => c.path === words[0])
  if (top === undefined) return { help: undefined, rest: words }
  const rest = words.slice(1)
  const next = positionals(rest, optionsOf(top))[0]
  const sub = top.subcommands.find((s) => s.path.split(" ").at(-1) === next?.word)
  return sub === undefined || next === undefined ? { help: top, rest } : { help: sub, rest: rest.filter((_, i) => i !== next.at) }
}

/** Whether the command line asks for help: `--help` or `-h` before any `--`. */
export const asksForHelp = (words: ReadonlyArray<string>): boolean => {
  const end = words.indexOf("--")
  return words.slice(0, end === -1 ? words.length : end).some((w) => w === "--help" || w === "-h")
}

/**
 * The first option the command does not take (or one left without its value), as a one-line message; none
 * when every option is known. Checked before parsing: @effect/cli would take an unknown option for the
 * command's argument (`ask --bogus hello` became the prompt `--bogus` and an unknown argument `hello`).
 */
export const optionProblem = (help: CommandHelp | undefined, words: ReadonlyArray<string>): string | undefined => {
  const options = optionsOf(help)
  const said = (problem: string) =>
    `${help === undefined ? "" : `${help.path}: `}${problem} (see ${BIN}${help === undefined ? "" : ` ${help.path}`} --help)`
  const end = words.indexOf("--") === -1 ? words.length : words.indexOf("--")
  for (let i = 0; i < end; i++) {
    const word = words[i]!
    if (!isOption(word)) continue
    const name = word.startsWith("--") ? word.split("=")[0]! : word
    const takesValue = options.get(name)
    // A prompt that starts with a dash: it belongs after `--`.
    if (takesValue === undefined && /\s/.test(word)) return said(`an argument starting with "-" goes after --`)
    if (takesValue === undefined) {
      const near = [...options.keys()].find((known) => known.startsWith("--") && editDistance(name, known) <= 2)
      return said(`unknown option ${name}${near === undefined ? "" : `, did you mean ${near}?`}`)
    }
    if (takesValue && name === word) {
      if (i + 1 >= end) return said(`${name} needs a value`)
      i++
    }
  }
  return undefined
}

const spanText = (span: Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
    default:
      return spanText(span.value)
  }
}

/** A help document of @effect/cli (its validation errors) as one line of text. */
export const docText = (doc: HelpDoc.HelpDoc): string => {
  switch (doc._tag) {
    case "Empty":
      return ""
    case "Header":
    case "Paragraph":
      return spanText(doc.value)
    case "DescriptionList":
      return doc.definitions.map(([span, d]) => `${spanText(span)} ${docText(d)}`).join(" ")
    case "Enumeration":
      return doc.elements.map(docText).join(" ")
    case "Sequence":
      return [docText(doc.left), docText(doc.right)].filter((t) => t !== "").join(" ")
  }
}
