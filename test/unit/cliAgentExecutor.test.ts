import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { foldAnswer } from "../../src/programs/answerFold.js"
import { cliAgentsIn } from "../../src/services/providers/cliAgent/provider.js"
import { Settings } from "../../src/services/settings.js"
import { countingExecutor } from "../support/countingExecutor.js"
import { makeFakeCliDir } from "../support/fakeCliAgent.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"

// The CLI-agent provider builds its command executor once, with the provider, not once per call: the executor layer
// it is given counts its builds and the processes started through it; two calls through one provider build it once
// and start two CLIs with it.

const tempDir = makeTempDirs("parallel-llm-cli-executor-")
const clis = makeFakeCliDir(tempDir())

const claudeAnswer = (text: string) => ({
  lines: [{ type: "assistant", message: { content: [{ type: "text", text }] } }, {
    type: "result",
    subtype: "success",
    is_error: false,
    result: text,
    usage: { input_tokens: 1, output_tokens: 1 }
  }]
})

describe("the CLI-agent provider's command executor", () => {
  it.live("is built once for the provider, whatever the number of calls", () =>
    Effect.gen(function*() {
      clis.plan("claude", claudeAnswer("4"))
      const counts = { built: 0, started: 0 }
      const provider = yield* cliAgentsIn(clis.env, countingExecutor(counts))
      const request = { model: "claude-code/sonnet", messages: [{ role: "user" as const, content: "What is 2+2?" }] }
      for (let call = 0; call < 2; call++) {
        const completion = yield* foldAnswer(request.model, provider.stream(request))
        expect(completion.content).toBe("4")
      }
      expect(counts).toEqual({ built: 1, started: 2 })
    }).pipe(Effect.provide(Settings.Test(makeTestSettings()))))
})
