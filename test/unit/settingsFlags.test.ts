import { Command } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { askCli } from "../../src/cli/askCli.js"
import { batchCli } from "../../src/cli/batchCli.js"
import { configCli } from "../../src/cli/configCli.js"
import { evalCli } from "../../src/cli/evalCli.js"
import type { CommandHelp } from "../../src/cli/flags.js"
import { modelsCli } from "../../src/cli/modelsCli.js"
import { resynthCli } from "../../src/cli/resynthCli.js"
import { runsCli, showCli } from "../../src/cli/runsCli.js"
import { openCli } from "../../src/cli/runsOpenCli.js"
import { serveCli } from "../../src/cli/serveCli.js"
import { type Named, namedIn, settingKeysOf, type SettingsFlags } from "../../src/cli/settingsOptions.js"
import type { AnySetting } from "../../src/settings/setting.js"
import { settingsTable } from "../../src/settings/table.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { itLive } from "../support/itLive.js"
import { tempRoot } from "../support/tempDirs.js"

// A command parses only the settings options its command line names (runCli.ts, settingsOptions.ts): whatever form a
// settings flag is given in, it parses to what it did with every option declared.

interface Case {
  readonly help: CommandHelp
  /** What the command's settings options parse `words` to, with the options `named` names (all without it). */
  readonly parse: (words: ReadonlyArray<string>, named?: Named) => Effect.Effect<SettingsFlags, unknown, Platform>
}

/** What @effect/cli runs a command line over: provided once a test (NodeContext's layer costs every build). */
type Platform = NodeContext.NodeContext

/** A command, with the positional arguments it needs to parse. */
const caseOf = <N extends string, A extends { readonly settings: SettingsFlags }>(
  cli: { readonly help: CommandHelp; readonly commandFor: (named?: Named) => Command.Command<N, never, never, A> },
  positionals: ReadonlyArray<string>
): Case => ({
  help: cli.help,
  parse: (words, named) =>
    Effect.suspend(() => {
      let parsed: SettingsFlags = {}
      const command = cli.commandFor(named).pipe(Command.withHandler((args: A) => Effect.sync(() => void (parsed = args.settings))))
      return Command.run(command, { name: "t", version: "0" })(["node", "t", ...positionals, ...words]).pipe(Effect.map(() => parsed))
    })
})

const cases: ReadonlyArray<Case> = [
  caseOf(askCli, []),
  caseOf(batchCli, ["prompts.jsonl"]),
  caseOf(serveCli, []),
  caseOf(modelsCli, []),
  caseOf(runsCli, []),
  caseOf(showCli, ["20260101-000000-000-00000000"]),
  caseOf(openCli, ["20260101-000000-000-00000000"]),
  caseOf(resynthCli, ["20260101-000000-000-00000000"]),
  caseOf(evalCli, []),
  caseOf(configCli, [])
]

/**
 * Each way a setting's flag may be written, with a value where it takes one. (@effect/cli alone refuses `--name=value`
 * for a repeatable option, with every option declared too: runCli splits it first, the last test here.)
 */
const formsOf = (s: AnySetting): ReadonlyArray<ReadonlyArray<string>> => {
  if (s.kind.flag === "on" || s.kind.flag === "off") return [[`--${s.flag}`]]
  const joined = s.kind.flag === "list" ? [] : [[`--${s.flag}=v1`]]
  return [[`--${s.flag}`, "v1"], ...joined, ...(s.alias === undefined ? [] : [[`-${s.alias}`, "v1"]])]
}

/** What a settings flag given as `formsOf` gives it parses to. */
const parsedValue = (s: AnySetting) =>
  s.kind.flag === "on" || s.kind.flag === "off" ? Option.some(true) : Option.some(s.kind.flag === "list" ? ["v1"] : "v1")

describe("settings options, declared only where named", () => {
  itLive.effect(
    "each flag parses to its value: every command's all together, `config`'s (it takes all) alone in its other forms",
    () =>
      Effect.gen(function*() {
        for (const { help, parse } of cases) {
          const keys = settingKeysOf(help.settings).filter((k) => k !== "logLevel")
          for (const key of help.settings === "all" ? keys : []) {
            const s: AnySetting = settingsTable[key]
            for (const words of formsOf(s).slice(1)) {
              // The one named, and no other: the others are not declared (`--name=value`, `-a value`).
              expect(yield* parse(words, namedIn(words)), `${help.path} ${words.join(" ")}`).toEqual({ [key]: parsedValue(s) })
            }
          }
          const words = keys.flatMap((key) => formsOf(settingsTable[key])[0]!)
          const expected = Object.fromEntries(keys.map((key) => [key, parsedValue(settingsTable[key])]))
          expect(yield* parse(words, namedIn(words)), help.path).toEqual(expected)
        }
      }).pipe(Effect.provide(NodeContext.layer))
  )

  itLive.effect(
    "with every option declared (a shell's completions), a flag parses the same, the others to none",
    () =>
      Effect.gen(function*() {
        const config = cases.find((c) => c.help.settings === "all")!
        const all = yield* config.parse(["--temperature", "v1", "-m", "v1"])
        expect(Object.keys(all).length).toBeGreaterThan(40)
        // A switch not given is false and a list empty, where without their options they are absent: the loader reads
        // all three as not given.
        const given = Object.entries(all).filter(([, value]) =>
          Option.isSome(value!) && value.value !== false && !(Array.isArray(value.value) && value.value.length === 0)
        )
        expect(given.sort()).toEqual([["models", Option.some(["v1"])], ["temperature", Option.some("v1")]])
      }).pipe(Effect.provide(NodeContext.layer))
  )

  itLive.effect(
    "a command line naming none of them parses to no settings, and one option named twice to both values",
    () =>
      Effect.gen(function*() {
        const ask = cases[0]!
        expect(yield* ask.parse(["a prompt"], namedIn(["a prompt"]))).toEqual({})
        const twice = ["-m", "a/b", "--model", "c/d"]
        expect((yield* ask.parse(twice, namedIn(twice)))["models"]).toEqual(Option.some(["a/b", "c/d"]))
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it("reads names as @effect/cli does: any case, `--name=value`, short flags together, after `--` too", () => {
    const named = namedIn(["ask", "-M", "a", "--Temperature=1", "-xs", "--", "--seed"])
    expect(["--model", "-m", "--temperature", "-x", "-s", "--seed"].map((name) => named([name]))).toEqual([
      false,
      true,
      true,
      true,
      true,
      true
    ])
    expect(named(["--timeout"])).toBe(false)
  })

  it("a repeatable option given as `--name=value` is taken, by the command line (@effect/cli alone refuses it)", async () => {
    const { freshDir } = tempRoot("pllm-settings-flags-")
    const env = { PATH: process.env.PATH, HOME: freshDir("home"), OPENROUTER_API_KEY: "sk-test" }
    const config = await runCliInProcess(["config", "--model=a/b", "--model", "c/d", "--temperature=0.5"], { env })
    expect(config.code, config.stderr).toBe(0)
    expect(config.stdout).toMatch(/^models +a\/b, c\/d +flag --model$/m)
    expect(config.stdout).toMatch(/^temperature +0\.5 +flag --temperature$/m)
    // Parsed, then refused for what it names: the file is not there.
    const ask = await runCliInProcess(["ask", "--attach=missing.txt", "-m", "a/b", "q"], { env, cwd: freshDir("cwd") })
    expect(ask.code).toBe(2)
    expect(ask.stderr).not.toContain("unknown argument")
    expect(ask.stderr).toContain("missing.txt")
  })
})
