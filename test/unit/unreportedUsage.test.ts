import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { foldAnswer } from "../../src/programs/answerFold.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { Settings } from "../../src/services/settings.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { connectMcpInProcess } from "../support/inProcessMcp.js"
import { serverEnv } from "../support/mcpHarness.js"
import { sharedHttpClientLayer } from "../support/realHttpClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { makeTestSettings } from "../support/testSettings.js"
import { resetFakeBeforeEach } from "../support/useFakeOpenRouter.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// An OpenAI-compatible server that reports no usage (many local servers): streams ask for it, and what
// is not reported is recorded as unknown, never as 0 tokens.

const { root: tmp, freshDir } = tempRoot("pllm-usage-")
const provider = withFakeProvider()
resetFakeBeforeEach(provider, { kind: "ok", usage: null })

const complete = (stream: boolean) =>
  Effect.flatMap(
    ModelClient,
    (client) => foldAnswer("local/llama", client.stream({ model: "local/llama", messages: [{ role: "user", content: "hi" }] }))
  ).pipe(
    Effect.provide(ModelClient.Default.pipe(
      Layer.provide(
        Layer.merge(Settings.Test(makeTestSettings({ baseUrl: provider.fake.url, apiKey: Option.none(), stream })), sharedHttpClientLayer)
      )
    ))
  )

describe("a server that reports no usage", () => {
  for (const stream of [true, false]) {
    it.live(`${stream ? "streamed" : "whole"} answer: usage is absent, and only a stream asks for it`, () =>
      Effect.gen(function*() {
        const completion = yield* complete(stream)
        expect(completion.content).toBe("Answer from local/llama")
        expect(completion.usage).toBeUndefined()
        const body = provider.fake.chatRequests()[0]!.body as Record<string, unknown>
        if (stream) expect(body["stream_options"]).toEqual({ include_usage: true })
        else expect(body).not.toHaveProperty("stream_options")
      }))
  }

  it("ask: call records have no usage, the manifest claims no tokens, the summary says tokens unknown", async () => {
    const out = freshDir("ask")
    const env = {
      PATH: process.env.PATH,
      HOME: tmp,
      OPENROUTER_BASE_URL: provider.fake.url,
      PARALLEL_LLM_OUTPUT_DIR: out,
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
    }
    const r = await runCliInProcess(["ask", "hello", "-m", "local/a", "-m", "local/b", "-s", "local/synth"], { env })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/· tokens unknown ·/)
    expect(r.stderr).not.toMatch(/\b0 tokens/)
    const [runId] = fs.readdirSync(out).filter((f) => fs.existsSync(path.join(out, f, "run.json")))
    const manifest = JSON.parse(fs.readFileSync(path.join(out, runId!, "run.json"), "utf8"))
    for (const call of [...manifest.candidates, manifest.synthesis]) {
      expect(call.status).toBe("ok")
      expect(call).not.toHaveProperty("usage")
    }
    // Unknown, not 0: no tokens at all when no call reported any.
    expect(manifest.usage).toEqual({ unreportedCalls: 3 })
  })

  it("process_prompt: its structured usage says which calls reported none, and matches the output schema", async () => {
    const env = serverEnv({
      baseUrl: provider.fake.url,
      outputDir: freshDir("mcp"),
      apiKey: "",
      models: ["local/m"],
      synthesizer: "local/s"
    })
    const mcp = await connectMcpInProcess(env)
    try {
      // Listing the tools makes the SDK's client check every structured result against its output schema.
      await mcp.client.listTools()
      const result = await mcp.client.callTool({ name: "process_prompt", arguments: { prompt: "hello" } })
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      expect(result.structuredContent).toMatchObject({ usage: { unreportedCalls: 2 } })
    } finally {
      await mcp.close()
    }
  })
})
