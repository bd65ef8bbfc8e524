import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber } from "effect"
import * as fs from "node:fs"
import { isTransient } from "../../src/domain/errors.js"
import type { ModelRequest } from "../../src/domain/modelCall.js"
import { foldAnswer, streamedText } from "../../src/programs/answerFold.js"
import { cliAgentsIn } from "../../src/services/providers/cliAgent/provider.js"
import { Settings } from "../../src/services/settings.js"
import { countingExecutor } from "../support/countingExecutor.js"
import { isAlive, makeFakeCliDir } from "../support/fakeCliAgent.js"
import { itClock } from "../support/itClock.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { pastFirstSleep } from "../support/testClock.js"
import { makeTestSettings } from "../support/testSettings.js"

// The CLI-agent provider against fake CLIs on PATH (test/support/fakeCliAgent.ts): what it runs, how it reads each
// CLI's events, how it fails, and that interrupting a call kills the CLI. The real CLIs are the agents tier's.

const tempDir = makeTempDirs("parallel-llm-cli-agent-")
const clis = makeFakeCliDir(tempDir())

const request = (model: string, text = "What is 2+2?"): ModelRequest => ({
  model,
  messages: [{ role: "system", content: "Answer briefly." }, { role: "user", content: text }]
})

/** One call through the provider, folded as a run folds it. */
const ask = (model: string, env = clis.env, req = request(model)) =>
  Effect.gen(function*() {
    const provider = yield* cliAgentsIn(env)
    const deltas: Array<string> = []
    const completion = yield* foldAnswer(model, provider.stream(req), { onDelta: (t) => Effect.sync(() => deltas.push(t)) })
    return { completion, deltas }
  }).pipe(Effect.provide(Settings.Test(makeTestSettings())))

const claudeResult = {
  type: "result",
  subtype: "success",
  is_error: false,
  result: "4",
  total_cost_usd: 0.0012,
  usage: { input_tokens: 20, output_tokens: 3, cache_read_input_tokens: 5 },
  modelUsage: { "claude-sonnet-x": {} }
}
const delta = (text: string) => ({
  type: "stream_event",
  event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }
})

describe("CLI agents: what runs and what it says", () => {
  it.live("claude-code: answer-only flags, the prompt on stdin, deltas to progress, usage marked subscription", () =>
    Effect.gen(function*() {
      clis.plan("claude", {
        lines: [{ type: "system", subtype: "init", tools: [] }, delta("The answer "), delta("is 4"), {
          type: "assistant",
          message: { content: [{ type: "text", text: "The answer is 4" }] }
        }, claudeResult]
      })
      // Our secrets set in the environment the provider is given, so that withholding them is what keeps them out.
      const secrets = () => ({ ...clis.env(), OPENROUTER_API_KEY: "sk-or-v1-secret", PARALLEL_LLM_HTTP_TOKEN: "http-secret" })
      const { completion, deltas } = yield* ask("claude-code/sonnet", secrets)
      expect(completion.content).toBe("The answer is 4")
      expect(deltas.join("")).toBe("The answer is 4")
      expect(completion.usage).toEqual({ promptTokens: 25, completionTokens: 3, cost: 0.0012, cachedTokens: 5, source: "subscription" })
      expect(completion.servedBy).toBe("claude-code/claude-sonnet-x")
      const ran = clis.record("claude")
      expect(ran.args).toEqual(expect.arrayContaining(["-p", "--output-format", "stream-json", "--strict-mcp-config", "--safe-mode"]))
      expect(ran.args[ran.args.indexOf("--tools") + 1]).toBe("")
      expect(ran.args[ran.args.indexOf("--setting-sources") + 1]).toBe("")
      expect(ran.args[ran.args.indexOf("--mcp-config") + 1]).toBe("{\"mcpServers\":{}}")
      expect(ran.args[ran.args.indexOf("--model") + 1]).toBe("sonnet")
      expect(ran.args[ran.args.indexOf("--system-prompt") + 1]).toBe("Answer briefly.")
      expect(ran.stdin).toBe("What is 2+2?")
      // A fresh working directory of its own, empty without attachments, gone after the call; our key withheld.
      expect(ran.files).toEqual([])
      expect(fs.existsSync(ran.cwd)).toBe(false)
      expect(ran.env["OPENROUTER_API_KEY"]).toBeUndefined()
      expect(ran.env["PARALLEL_LLM_HTTP_TOKEN"]).toBeUndefined()
    }))

  it.live("codex: the message whole, usage and the model flag; read-only sandbox and no user config", () =>
    Effect.gen(function*() {
      clis.plan("codex", {
        lines: [{ type: "thread.started" }, { type: "turn.started" }, {
          type: "item.completed",
          item: { id: "i", type: "agent_message", text: "Four." }
        }, { type: "turn.completed", usage: { input_tokens: 30, cached_input_tokens: 0, output_tokens: 4, reasoning_output_tokens: 2 } }]
      })
      const { completion } = yield* ask("codex/gpt-5")
      expect(completion.content).toBe("Four.")
      expect(completion.usage).toEqual({ promptTokens: 30, completionTokens: 4, reasoningTokens: 2, source: "subscription" })
      const ran = clis.record("codex")
      expect(ran.args).toEqual(expect.arrayContaining(["exec", "--json", "--ignore-user-config", "--ephemeral", "mcp_servers={}"]))
      expect(ran.args[ran.args.indexOf("--sandbox") + 1]).toBe("read-only")
      expect(ran.args[ran.args.indexOf("--model") + 1]).toBe("gpt-5")
      expect(ran.args.join(" ")).toContain("--disable shell_tool --disable unified_exec")
      // No system flag: the system message leads the prompt.
      expect(ran.stdin).toBe("Answer briefly.\n\n---\n\nWhat is 2+2?")
    }))

  it.live("gemini-cli: its own home whose settings allow no tool and no MCP server, deltas, usage", () =>
    Effect.gen(function*() {
      clis.plan("gemini", {
        lines: [
          { type: "init", model: "gemini-x" },
          { type: "message", role: "user", content: "What is 2+2?" },
          { type: "message", role: "assistant", content: "It is ", delta: true },
          { type: "message", role: "assistant", content: "4.", delta: true },
          { type: "result", status: "success", stats: { input_tokens: 9, output_tokens: 2, cached: 0 } }
        ]
      })
      const { completion } = yield* ask("gemini-cli")
      expect(completion.content).toBe("It is 4.")
      expect(completion.servedBy).toBe("gemini-cli/gemini-x")
      expect(completion.usage).toEqual({ promptTokens: 9, completionTokens: 2, source: "subscription" })
      const ran = clis.record("gemini")
      expect(ran.args).not.toContain("--model")
      expect(ran.args[ran.args.indexOf("--approval-mode") + 1]).toBe("plan")
      expect(ran.settings).toMatchObject({ tools: { core: ["none"] }, mcpServers: {}, admin: { mcp: { enabled: false } } })
      expect(ran.env["GEMINI_CLI_HOME"]).not.toBe(ran.cwd)
    }))
})

describe("CLI agents: failures", () => {
  itClock.effect("not logged in fails at once, in one line saying what to run; a rate limit is transient", () =>
    Effect.gen(function*() {
      clis.plan("claude", { lines: [{ ...claudeResult, is_error: true, result: "Not logged in · Please run /login" }], exit: 1 })
      const login = yield* Effect.either(ask("claude-code/sonnet"))
      expect(Either.isLeft(login) && login.left._tag).toBe("AgentUnavailable")
      const message = Either.isLeft(login) ? login.left.message : ""
      expect(message).toContain("run `claude login`")
      expect(message).not.toContain("\n")

      clis.plan("codex", {
        lines: [{ type: "turn.failed", error: { message: "unexpected status 429 Too Many Requests: slow down" } }],
        exit: 1
      })
      const limited = yield* Effect.either(ask("codex/gpt-5"))
      expect(Either.isLeft(limited) && limited.left._tag).toBe("RateLimited")
      expect(Either.isLeft(limited) && isTransient(limited.left)).toBe(true)

      clis.plan("gemini", { lines: [], stderr: "Please set an Auth method in your settings.json\n", exit: 41 })
      const gemini = yield* Effect.either(ask("gemini-cli/gemini-x"))
      expect(Either.isLeft(gemini) ? [gemini.left._tag, gemini.left.message.includes("run `gemini`")] : []).toEqual([
        "AgentUnavailable",
        true
      ])

      clis.plan("claude", { lines: [{ type: "system", subtype: "api_retry", error_status: 404, error: "model not found" }], hang: true })
      // The CLI ignores SIGTERM: its grace before SIGKILL passes on the TestClock.
      const unknown = yield* pastFirstSleep(Effect.either(ask("claude-code/nonesuch")))
      expect(Either.isLeft(unknown) ? [unknown.left._tag, isTransient(unknown.left)] : []).toEqual(["AgentUnavailable", false])
      expect(isAlive(clis.record("claude").pid)).toBe(false)
    }))

  it.live("a CLI missing from PATH: one line saying how to install it, and no process started", () =>
    Effect.gen(function*() {
      const counts = { built: 0, started: 0 }
      /** The failure of one call of `model` with `dir` as the whole PATH. */
      const failureWith = (dir: string, model: string) =>
        Effect.gen(function*() {
          const provider = yield* cliAgentsIn(() => ({ ...process.env, PATH: dir }), countingExecutor(counts))
          const result = yield* Effect.either(foldAnswer(model, provider.stream(request(model))))
          return Either.isLeft(result) ? [result.left._tag, result.left.message] : []
        })
      expect(yield* failureWith(tempDir(), "codex/gpt-5")).toEqual([
        "AgentUnavailable",
        "codex is not on PATH: install it (npm install -g @openai/codex) or drop codex/gpt-5"
      ])
      // A file by its name that is not executable is no CLI either: the same line (its spawn failed with EACCES, which
      // was retried as a network error).
      const notExecutable = tempDir()
      fs.writeFileSync(`${notExecutable}/claude`, "#!/bin/sh\n", { mode: 0o644 })
      expect(yield* failureWith(notExecutable, "claude-code")).toEqual([
        "AgentUnavailable",
        "claude is not on PATH: install it (npm install -g @anthropic-ai/claude-code) or drop claude-code"
      ])
      expect(counts.started).toBe(0)
    }).pipe(Effect.provide(Settings.Test(makeTestSettings()))))

  itClock.effect("interrupting a call kills the CLI's process and keeps what it streamed", () =>
    Effect.gen(function*() {
      // The fake ignores SIGTERM: the provider must still end it (SIGKILL after its grace, passed on the TestClock).
      clis.plan("claude", { lines: [delta("half an ans")], hang: true })
      const provider = yield* cliAgentsIn(clis.env).pipe(Effect.provide(Settings.Test(makeTestSettings())))
      const streamed = streamedText()
      const seen = yield* Effect.makeLatch(false)
      const call = yield* Effect.fork(foldAnswer("claude-code/sonnet", provider.stream(request("claude-code/sonnet")), {
        streamed,
        onDelta: () => seen.open
      }))
      yield* seen.await
      const pid = clis.record("claude").pid
      expect(isAlive(pid)).toBe(true)
      yield* pastFirstSleep(Fiber.interrupt(call))
      expect(isAlive(pid)).toBe(false)
      expect(streamed.pieces.join("")).toBe("half an ans")
    }))

  it.live("attachments are the only files of the working directory; images go to codex by flag", () =>
    Effect.gen(function*() {
      clis.plan("codex", {
        lines: [{ type: "item.completed", item: { type: "agent_message", text: "A cat." } }, { type: "turn.completed" }]
      })
      const png = `data:image/png;base64,${Buffer.from("not really a png").toString("base64")}`
      const req: ModelRequest = {
        model: "codex/gpt-5",
        messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: png } }] }]
      }
      const { completion } = yield* ask("codex/gpt-5", clis.env, req)
      expect(completion.content).toBe("A cat.")
      const ran = clis.record("codex")
      expect(ran.files).toEqual(["01-image.png"])
      expect(ran.args[ran.args.indexOf("--image") + 1]).toBe("01-image.png")
      expect(ran.stdin).toContain("01-image.png")
    }))
})
