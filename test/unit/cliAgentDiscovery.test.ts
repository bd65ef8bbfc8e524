import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect } from "@effect/vitest"
import { Effect, Fiber, FiberStatus, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { ModelRequest } from "../../src/domain/modelCall.js"
import { foldAnswer } from "../../src/programs/answerFold.js"
import { agentProblem, discoverCliAgentsIn } from "../../src/services/providers/cliAgent/discovery.js"
import { executableOnPath } from "../../src/services/providers/cliAgent/executableOnPath.js"
import { cliAgentsIn } from "../../src/services/providers/cliAgent/provider.js"
import { Settings } from "../../src/services/settings.js"
import { loadSettings } from "../../src/settings/load.js"
import { countingExecutor } from "../support/countingExecutor.js"
import { isAlive, makeFakeCliDir } from "../support/fakeCliAgent.js"
import { itClock } from "../support/itClock.js"
import { itLive } from "../support/itLive.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { pastFirstSleep } from "../support/testClock.js"
import { makeTestSettings } from "../support/testSettings.js"

// What `models`, `--check-models` and `list_models` learn of the CLI agents without a model call, and the cap on
// CLI agents running at once, against fake CLIs on PATH (test/support/fakeCliAgent.ts).

const tempDir = makeTempDirs("parallel-llm-cli-discovery-")

describe("CLI agents: discovery", () => {
  itLive.effect("versions and logins as each CLI says them; a CLI not on PATH is not found", () =>
    Effect.gen(function*() {
      const clis = makeFakeCliDir(tempDir())
      fs.rmSync(path.join(clis.dir, "gemini"))
      clis.plan("claude", { lines: [], version: "2.1.332 (Claude Code)", login: { output: "{\n  \"loggedIn\": true\n}\n", code: 0 } })
      clis.plan("codex", { lines: [], version: "codex-cli 0.169.0", login: { output: "Not logged in\n", code: 1 } })
      const { GEMINI_API_KEY: _key, ...env } = clis.env()
      const agents = yield* discoverCliAgentsIn(() => ({ ...env, PATH: `${clis.dir}${path.delimiter}${path.dirname(process.execPath)}` }))
      expect(agents).toEqual([
        { cli: "claude-code", executable: "claude", found: true, version: "2.1.332", loggedIn: true, login: "claude login" },
        { cli: "codex", executable: "codex", found: true, version: "0.169.0", loggedIn: false, login: "codex login" },
        { cli: "gemini-cli", executable: "gemini", found: false, login: "gemini" }
      ])
      expect(agents.map(agentProblem)).toEqual([undefined, "codex is not logged in: run `codex login`", "gemini is not on PATH"])
    }))

  itLive.effect(
    "Gemini CLI is logged in by a key in the environment; Codex with a provider of the user's cannot say",
    () =>
      Effect.gen(function*() {
        const clis = makeFakeCliDir(tempDir())
        clis.plan("gemini", { lines: [], version: "0.61.0" })
        clis.plan("codex", { lines: [], version: "codex-cli 0.169.0", login: { output: "Not logged in\n", code: 1 } })
        clis.plan("claude", { lines: [], version: "2.1.332" })
        const agents = yield* discoverCliAgentsIn(
          () => ({ ...clis.env(), PATH: `${clis.dir}${path.delimiter}${path.dirname(process.execPath)}`, GEMINI_API_KEY: "k" }),
          { codexConfig: ["model_provider=\"my\""] }
        )
        expect(agents.find((a) => a.cli === "gemini-cli")).toMatchObject({ loggedIn: true })
        expect(agents.find((a) => a.cli === "codex")).not.toHaveProperty("loggedIn")
      })
  )
})

describe("CLI agents: one not on PATH is not started", () => {
  /** `PATH` as the fake CLIs' tests set it: `first` (the fakes), then node's directory. */
  const pathOf = (first: string) => `${first}${path.delimiter}${path.dirname(process.execPath)}`

  itLive.effect("with none of the CLIs on PATH, no process is started and each is not found as before", () =>
    Effect.gen(function*() {
      const counts = { built: 0, started: 0 }
      const agents = yield* discoverCliAgentsIn(
        () => ({ ...process.env, PATH: pathOf(tempDir()) }),
        { executorLayer: countingExecutor(counts) }
      )
      expect(agents).toEqual([
        { cli: "claude-code", executable: "claude", found: false, login: "claude login" },
        { cli: "codex", executable: "codex", found: false, login: "codex login" },
        { cli: "gemini-cli", executable: "gemini", found: false, login: "gemini" }
      ])
      expect(agents.map(agentProblem)).toEqual(["claude is not on PATH", "codex is not on PATH", "gemini is not on PATH"])
      expect(counts.started).toBe(0)
    }))

  itLive.effect("a CLI on PATH that is not executable (0644) is not found, and only the others are started", () =>
    Effect.gen(function*() {
      const clis = makeFakeCliDir(tempDir())
      clis.plan("codex", { lines: [], version: "codex-cli 0.169.0", login: { output: "Logged in\n", code: 0 } })
      fs.chmodSync(path.join(clis.dir, "claude"), 0o644)
      // A directory by the name is no CLI either.
      fs.rmSync(path.join(clis.dir, "gemini"))
      fs.mkdirSync(path.join(clis.dir, "gemini"))
      const counts = { built: 0, started: 0 }
      const agents = yield* discoverCliAgentsIn(() => ({ ...clis.env(), PATH: pathOf(clis.dir) }), {
        executorLayer: countingExecutor(counts)
      })
      expect(agents.map((a) => [a.cli, a.found])).toEqual([["claude-code", false], ["codex", true], ["gemini-cli", false]])
      // Codex's `--version` and `login status`: nothing else.
      expect(counts.started).toBe(2)
    }))

  itLive.effect("a relative PATH entry is relative to this process's directory, where the probe runs", () =>
    Effect.gen(function*() {
      const clis = makeFakeCliDir(tempDir())
      clis.plan("claude", { lines: [], version: "2.1.332", login: { output: "{\"loggedIn\": true}", code: 0 } })
      const relative = path.relative(process.cwd(), clis.dir)
      expect(path.isAbsolute(relative)).toBe(false)
      const agents = yield* discoverCliAgentsIn(() => ({ ...clis.env(), PATH: pathOf(relative) }), { only: ["claude-code"] })
      expect(agents).toEqual([
        { cli: "claude-code", executable: "claude", found: true, version: "2.1.332", loggedIn: true, login: "claude login" }
      ])
    }))
})

describe("CLI agents: the PATH lookup, as execvp does it", () => {
  const lookup = (name: string, env: Record<string, string>, cwd: string) =>
    executableOnPath(name, env, cwd).pipe(Effect.map(Option.getOrUndefined), Effect.provide(NodeFileSystem.layer))

  /** A directory holding `bin/claude`, executable, and `claude` beside `bin`, executable too. */
  const tree = () => {
    const dir = tempDir()
    fs.mkdirSync(path.join(dir, "bin"))
    fs.writeFileSync(path.join(dir, "bin", "claude"), "#!/bin/sh\n", { mode: 0o755 })
    fs.writeFileSync(path.join(dir, "claude"), "#!/bin/sh\n", { mode: 0o755 })
    return dir
  }

  itLive.effect(
    "the entries in order, from the environment given (not this process's), the first executable file winning",
    () =>
      Effect.gen(function*() {
        const dir = tree()
        fs.writeFileSync(path.join(dir, "bin", "codex"), "#!/bin/sh\n", { mode: 0o644 })
        expect(yield* lookup("claude", { PATH: `/nonexistent:${dir}/bin:${dir}` }, "/")).toBe(`${dir}/bin/claude`)
        expect(yield* lookup("claude", { PATH: `${dir}:${dir}/bin` }, "/")).toBe(`${dir}/claude`)
        expect(yield* lookup("codex", { PATH: `${dir}/bin` }, "/")).toBeUndefined()
        expect(yield* lookup("claude", { PATH: "/nonexistent" }, dir)).toBeUndefined()
      })
  )

  itLive.effect("an empty entry is the working directory; a relative one is relative to it", () =>
    Effect.gen(function*() {
      const dir = tree()
      expect(yield* lookup("claude", { PATH: "/nonexistent:" }, dir)).toBe(`${dir}/claude`)
      expect(yield* lookup("claude", { PATH: "" }, dir)).toBe(`${dir}/claude`)
      expect(yield* lookup("claude", { PATH: "::" }, path.join(dir, "bin"))).toBe(`${dir}/bin/claude`)
      expect(yield* lookup("claude", { PATH: "bin" }, dir)).toBe(`${dir}/bin/claude`)
      expect(yield* lookup("claude", { PATH: "bin" }, path.join(dir, "bin"))).toBeUndefined()
    }))

  itLive.effect(
    "a name with a slash is that path; links are followed; no PATH at all is the system's default",
    () =>
      Effect.gen(function*() {
        const dir = tree()
        expect(yield* lookup("bin/claude", { PATH: "/nonexistent" }, dir)).toBe(`${dir}/bin/claude`)
        expect(yield* lookup(`${dir}/claude`, {}, "/")).toBe(`${dir}/claude`)
        expect(yield* lookup("bin", { PATH: dir }, dir)).toBeUndefined()
        // A link is what it points to (npm installs a CLI as a link to its script): a dangling one is nothing.
        fs.symlinkSync(path.join(dir, "bin", "claude"), path.join(dir, "codex"))
        fs.symlinkSync(path.join(dir, "nowhere"), path.join(dir, "gemini"))
        expect(yield* lookup("codex", { PATH: dir }, "/")).toBe(`${dir}/codex`)
        expect(yield* lookup("gemini", { PATH: dir }, "/")).toBeUndefined()
        expect(["/usr/bin/sh", "/bin/sh"]).toContain(yield* lookup("sh", {}, dir))
      })
  )
})

describe("CLI agents: a check of the ones a run names", () => {
  itLive.effect("probes only the CLIs named: the others are not started", () =>
    Effect.gen(function*() {
      const clis = makeFakeCliDir(tempDir())
      clis.plan("claude", { lines: [], version: "2.1.332", login: { output: "{\"loggedIn\": true}", code: 0 } })
      // Codex and Gemini CLI, were they started, would leave a mark.
      for (const name of ["codex", "gemini"]) {
        fs.writeFileSync(path.join(clis.dir, name), `#!/bin/sh\n: > "$0.started"\necho 1.0.0\n`, { mode: 0o755 })
      }
      const environment = () => ({ ...clis.env(), PATH: `${clis.dir}${path.delimiter}${path.dirname(process.execPath)}` })
      const agents = yield* discoverCliAgentsIn(environment, { only: ["claude-code"] })
      expect(agents).toEqual([
        { cli: "claude-code", executable: "claude", found: true, version: "2.1.332", loggedIn: true, login: "claude login" }
      ])
      expect(["codex", "gemini"].filter((name) => fs.existsSync(path.join(clis.dir, `${name}.started`)))).toEqual([])
      // A listing probes all three.
      expect(yield* discoverCliAgentsIn(environment)).toHaveLength(3)
      expect(["codex", "gemini"].filter((name) => fs.existsSync(path.join(clis.dir, `${name}.started`)))).toEqual(["codex", "gemini"])
    }))
})

describe("CLI agents: their own concurrency cap", () => {
  itClock.effect("with cliAgentConcurrency 1 a second call starts only when the first has ended", () =>
    Effect.gen(function*() {
      const clis = makeFakeCliDir(tempDir())
      clis.plan("claude", { lines: [], hang: true })
      // The provider reads the environment once a call holds its permit: a count of those reads says how many got past it.
      let pastThePermit = 0
      const environment = () => {
        pastThePermit += 1
        return clis.env()
      }
      const provider = yield* cliAgentsIn(environment).pipe(Effect.provide(Settings.Test(makeTestSettings({ cliAgentConcurrency: 1 }))))
      const request: ModelRequest = { model: "claude-code/sonnet", messages: [{ role: "user", content: "first" }] }
      const first = yield* Effect.fork(foldAnswer(request.model, provider.stream(request)))
      const record = path.join(clis.dir, "claude.record.json")
      while (!fs.existsSync(record)) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      const firstPid = clis.record("claude").pid
      clis.plan("codex", {
        lines: [{ type: "item.completed", item: { type: "agent_message", text: "second" } }, { type: "turn.completed" }]
      })
      const second = yield* Effect.fork(foldAnswer("codex/x", provider.stream({ ...request, model: "codex/x" })))
      // The second waits for the permit: once its fiber is suspended it has not gone past it (a call that had would have
      // read the environment first, synchronously) and its CLI has not started while the first runs.
      while (!FiberStatus.isSuspended(yield* Fiber.status(second))) yield* Effect.yieldNow()
      expect(pastThePermit).toBe(1)
      expect(fs.existsSync(path.join(clis.dir, "codex.record.json"))).toBe(false)
      // The hanging CLI ignores SIGTERM: its grace before SIGKILL passes on the TestClock.
      yield* pastFirstSleep(Fiber.interrupt(first))
      expect(isAlive(firstPid)).toBe(false)
      const answer = yield* Fiber.join(second)
      expect(answer.content).toBe("second")
    }))
})

describe("CLI agents: settings", () => {
  const noConfig = tempDir()
  const load = (env: Record<string, string>) =>
    loadSettings({ flags: {}, env: { XDG_CONFIG_HOME: noConfig, APPDATA: noConfig, ...env } }).pipe(Effect.provide(NodeFileSystem.layer))

  itLive.effect("a panel of CLI agents only needs no OpenRouter key; one HTTP model among them does", () =>
    Effect.gen(function*() {
      const agentsOnly = yield* load({
        PARALLEL_LLM_MODELS: "claude-code/sonnet,codex,gemini-cli",
        PARALLEL_LLM_SYNTHESIZER: "claude-code"
      })
      expect(agentsOnly.settings.models).toEqual(["claude-code/sonnet", "codex", "gemini-cli"])
      const mixed = yield* Effect.flip(
        load({ PARALLEL_LLM_MODELS: "claude-code/sonnet,openai/gpt-5", PARALLEL_LLM_SYNTHESIZER: "claude-code" })
      )
      expect(mixed.message).toContain("OPENROUTER_API_KEY is not set")
    }))
})
