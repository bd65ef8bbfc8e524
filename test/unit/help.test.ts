import { Command, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import type { CommandHelp } from "../../src/cli/flags.js"
import { commandHelp, commandOf, optionProblem, rootHelp } from "../../src/cli/help.js"
import { runsCli } from "../../src/cli/runsCli.js"
import { settingsFromFlags } from "../../src/cli/settingsOptions.js"
import { DESCRIPTION, helpTree } from "../../src/cli/tree.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { itLive } from "../support/itLive.js"

// `--help` is rendered from the declarations (help.ts); these check it at an 80-column width, and run whole
// command lines in-process (runCli) for what a user sees on stdout and stderr and the exit code.

const lines = (text: string) => text.replace(/\n$/, "").split("\n")
const root = rootHelp(helpTree, { version: "9.9.9", description: DESCRIPTION }, 80)
const byPath = (p: string): CommandHelp => {
  const found = helpTree.flatMap((c) => [c, ...c.subcommands]).find((c) => c.path === p)
  if (found === undefined) throw new Error(`no command ${p}`)
  return found
}
const helpOf = (p: string, width = 80) => commandHelp(byPath(p), width)
const everyPath = helpTree.flatMap((c) => [c, ...c.subcommands]).map((c) => c.path)
/** The entry of `flag` in a help text: its first line and the lines indented under it. */
const entryOf = (text: string, flag: string): string => {
  const all = lines(text)
  const at = all.findIndex((l) => new RegExp(`^  (-\\w, )?${flag}[ ,]`).test(l))
  if (at === -1) throw new Error(`no entry for ${flag}`)
  const rest = all.slice(at + 1)
  const end = rest.findIndex((l) => !l.startsWith("    "))
  return [all[at], ...rest.slice(0, end === -1 ? rest.length : end)].join(" ").replace(/(?<=\S)\s+/g, " ")
}

describe("--help fits a terminal", () => {
  it("sizes at 80 columns: the root at most 40 lines, ask at most 120, runs, models and config at most 40", () => {
    expect(lines(root).length).toBeLessThanOrEqual(40)
    expect(lines(helpOf("ask")).length).toBeLessThanOrEqual(120)
    for (const p of ["runs", "models", "config"]) expect(lines(helpOf(p)).length, p).toBeLessThanOrEqual(40)
  })

  it("no line of any command's help is wider than the width asked for (80), nor than 100 on a wide terminal", () => {
    for (const [width, limit] of [[80, 80], [200, 100]] as const) {
      for (
        const text of [
          rootHelp(helpTree, { version: "9.9.9", description: DESCRIPTION }, width),
          ...everyPath.map((p) => helpOf(p, width))
        ]
      ) {
        const widest = Math.max(...lines(text).map((l) => l.length))
        expect(widest, lines(text).find((l) => l.length === widest)).toBeLessThanOrEqual(limit)
      }
    }
  })

  it("the root help names every command, with its arguments", () => {
    for (const p of everyPath) expect(root).toMatch(new RegExp(`^  - ${p}\\b`, "m"))
    expect(root).toContain("- runs show <run-id>")
    expect(root).toContain("- ask [prompt]")
  })

  it("ask takes the flags its help only names (web search, cache, CLI agents, attribution, tracing), named in one section", async () => {
    const named = lines(helpOf("ask")).slice(lines(helpOf("ask")).indexOf("More settings (described in docs/configuration.md):"))
    for (
      const flag of ["--cache", "--web-max-results", "--web-exclude-domain", "--cli-agent-concurrency", "--app-title", "--trace-content"]
    ) {
      expect(named.join(" "), flag).toContain(flag)
    }
    // The flags parse: `--cache` alone stands for its TTL, and a bad value is refused naming its flag, not as unknown.
    const r = await runCliInProcess(["ask", "--cache", "--trace-content", "--web-max-results", "oops", "q"], {
      env: { PATH: process.env.PATH }
    })
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe(`parallel-llm: --web-max-results: expected a whole number, got "oops"`)
  })

  it("ask --help shows each option's kind, default and environment variable", () => {
    const ask = helpOf("ask")
    expect(entryOf(ask, "--timeout")).toMatch(/^ {2}--timeout <seconds> Per-model timeout .*\[240; PARALLEL_LLM_TIMEOUT\]$/)
    expect(entryOf(ask, "--max-tokens")).toMatch(/^ {2}--max-tokens <integer> .*PARALLEL_LLM_MAX_TOKENS\]$/)
    expect(entryOf(ask, "--synthesizer")).toMatch(/^ {2}-s, --synthesizer <model-id> .*\[~google\/.*; PARALLEL_LLM_SYNTHESIZER\]$/)
    expect(entryOf(ask, "--output-dir")).toMatch(/^ {2}--output-dir <path> .*PARALLEL_LLM_OUTPUT_DIR\]$/)
    expect(entryOf(ask, "--reasoning")).toMatch(/^ {2}--reasoning <low\|medium\|high> /)
    expect(entryOf(ask, "--no-stream")).toMatch(/\[on; PARALLEL_LLM_STREAM=false\]$/)
    expect(entryOf(ask, "--model")).toMatch(
      /^ {2}-m, --model <model-id>\.\.\. Candidate models \[repeatable\] \[~openai\/.*; PARALLEL_LLM_MODELS, comma-separated\]$/
    )
    expect(ask).not.toContain("A user-defined piece of text")
    expect(ask).not.toContain("\x1b[")
  })

  it("ask --help: --attach looks optional and repeatable, and the settings are grouped by topic", () => {
    const ask = helpOf("ask")
    expect(lines(ask).slice(0, 3).join(" ")).toMatch(/^Usage: parallel-llm ask .*\[--attach <path>\]\.\.\. /)
    expect(entryOf(ask, "--attach")).toMatch(/^ {2}--attach <path>\.\.\. .*\[repeatable\]$/)
    const titles = lines(ask).filter((l) => / settings \[default; environment variable\]:$/.test(l)).map((l) => l.split(" ")[0])
    expect(titles).toEqual(["Model", "Run", "Strategy", "Attachment", "Output"])
  })

  it("each command offers only the settings it uses: runs has no --temperature, ask no serve settings, config them all", () => {
    const runs = helpOf("runs")
    for (const flag of ["--temperature", "--http-max-sessions", "--model"]) expect(runs).not.toContain(flag)
    expect(entryOf(runs, "--output-dir")).toContain("PARALLEL_LLM_OUTPUT_DIR")
    expect(helpOf("ask")).not.toContain("--http-max-sessions")
    expect(helpOf("serve")).toContain("--http-max-sessions")
    expect(helpOf("resynth")).not.toMatch(/--model\b/)
    expect(helpOf("config")).toContain("--http-max-sessions")
  })
})

describe("the command line against the declarations", () => {
  const problem = (...words: ReadonlyArray<string>) => {
    const target = commandOf(helpTree, words)
    return optionProblem(target.help, target.rest)
  }

  it("names an unknown option, wherever it stands, with a pointer to the command's help", () => {
    expect(problem("ask", "--bogus", "hello")).toBe("ask: unknown option --bogus (see parallel-llm ask --help)")
    expect(problem("ask", "hello", "--tempreature", "1")).toBe(
      "ask: unknown option --tempreature, did you mean --temperature? (see parallel-llm ask --help)"
    )
    expect(problem("runs", "show", "--bogus", "x")).toBe("runs show: unknown option --bogus (see parallel-llm runs show --help)")
    expect(problem("resynth", "--bogus")).toBe("resynth: unknown option --bogus (see parallel-llm resynth --help)")
  })

  it("refuses a setting's flag the command does not take, and takes the ones it does", () => {
    expect(problem("runs", "--temperature", "1")).toBe("runs: unknown option --temperature (see parallel-llm runs --help)")
    expect(problem("models", "--output-dir", "x")).toMatch(/^models: unknown option --output-dir/)
    expect(problem("runs", "--output-dir", "x", "--limit", "3", "--json")).toBeUndefined()
    expect(problem("config", "--temperature", "1", "-m", "a/b")).toBeUndefined()
    expect(problem("ask", "-m", "a/b", "--attach", "x", "--attach=y", "hi", "--", "--not-an-option")).toBeUndefined()
  })

  it("a prompt that starts with a dash is pointed after --", () => {
    expect(problem("ask", "-what is 2+2?")).toBe(`ask: an argument starting with "-" goes after -- (see parallel-llm ask --help)`)
  })

  it("a value-taking option with nothing after it", () => {
    expect(problem("config", "--timeout")).toBe("config: --timeout needs a value (see parallel-llm config --help)")
  })

  itLive.effect("@effect/cli's own parser refuses a flag the command does not declare", () =>
    Effect.gen(function*() {
      const error = yield* Command.run(runsCli.commandFor(), { name: "t", version: "0" })(["node", "t", "--temperature", "1"]).pipe(
        Effect.flip
      )
      expect(ValidationError.isValidationError(error)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer)))

  itLive.effect("the environment still sets what a command takes no flag for", () =>
    Effect.gen(function*() {
      process.env.PARALLEL_LLM_TEMPERATURE = "1.5"
      const { settings } = yield* settingsFromFlags({ timeout: Option.some("9"), config: Option.none() }, { requireApiKey: false }).pipe(
        Effect.ensuring(Effect.sync(() => delete process.env.PARALLEL_LLM_TEMPERATURE))
      )
      expect(settings.timeoutMs).toBe(9000)
      expect(settings.temperature).toBe(1.5)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("the built CLI", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pllm-help-"))
  const env = { PATH: process.env.PATH, HOME: tmp, PARALLEL_LLM_OUTPUT_DIR: path.join(tmp, "runs"), COLUMNS: "80" }
  beforeAll(() => {
  })
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  it("ask --help on stdout at 80 columns, exit 0", async () => {
    const r = await runCliInProcess(["ask", "--help"], { env })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe(helpOf("ask"))
  })

  it("ask --bogus hello: one line naming --bogus, exit 2", async () => {
    const r = await runCliInProcess(["ask", "--bogus", "hello"], { env })
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe("parallel-llm: ask: unknown option --bogus (see parallel-llm ask --help)\n")
  })

  it("an @effect/cli validation error is one line with a pointer to --help, exit 2", async () => {
    const r = await runCliInProcess(["runs", "--limit", "x"], { env })
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`parallel-llm: --limit: expected a whole number, got "x" (see parallel-llm runs --help)\n`)
    const missing = await runCliInProcess(["runs", "show"], { env })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe("parallel-llm: Missing argument <run-id> (see parallel-llm runs show --help)\n")
  })
})
