import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { addBilled } from "../../src/programs/answerFold.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { onlyManifestIn } from "../support/mcpHarness.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// A call retried after a billed attempt, then answered: its record sums both bills and keeps the answer's detail
// (reasoning and cached tokens, upstream costs), not only its prompt and completion tokens and cost.

const provider = withFakeProvider()
const tempDir = makeTempDirs("pllm-retried-")

describe("the usage of a call retried, then answered", () => {
  it("adds up the tokens, reasoning and cached tokens, the cost and the upstream costs of both attempts", async () => {
    provider.fake.setScript({
      "rt/flaky": [
        {
          kind: "streamError",
          partial: "It is",
          usage: {
            prompt_tokens: 100,
            completion_tokens: 7,
            cost: 0.002,
            reasoning_tokens: 3,
            cost_details: { upstream_inference_cost: 0.001 }
          }
        },
        {
          kind: "ok",
          content: "It is 4.",
          usage: {
            prompt_tokens: 100,
            completion_tokens: 9,
            cost: 0.003,
            reasoning_tokens: 5,
            cached_tokens: 80,
            cost_details: { upstream_inference_cost: 0.002 }
          }
        }
      ],
      "rt/synth": { kind: "ok", content: "4." }
    })
    const dir = tempDir()
    const env = { ...provider.cliEnv(dir), PARALLEL_LLM_RETRIES: "1", PARALLEL_LLM_RETRY_BASE_DELAY: "0" }
    const r = await runCliInProcess(["ask", "What is 2+2?", "-m", "rt/flaky", "-s", "rt/synth"], { env })
    expect(r.code, r.stderr).toBe(0)
    const [candidate] = onlyManifestIn(path.join(dir, "runs")).candidates
    expect(candidate).toMatchObject({ status: "ok", attempts: 2 })
    expect(candidate.usage).toEqual({
      promptTokens: 200,
      completionTokens: 16,
      cost: 0.005,
      reasoningTokens: 8,
      cachedTokens: 80,
      costDetails: { upstreamInferenceCost: 0.003 }
    })
  })

  it("keeps the answer's source: a CLI agent's retried answer stays counted on the subscription", () => {
    const answer = { promptTokens: 30, completionTokens: 4, reasoningTokens: 2, source: "subscription" as const }
    const spent = { promptTokens: 30, completionTokens: 1, estimated: true }
    expect(addBilled(answer, spent)).toEqual({
      promptTokens: 60,
      completionTokens: 5,
      reasoningTokens: 2,
      estimated: true,
      source: "subscription"
    })
  })
})
