import { describe, expect, it } from "vitest"
import { connectMcp, serverEnv } from "../support/mcpHarness.js"
import { PROMPT, SYNTH, useOtelFixture } from "../support/otelFixture.js"
import { startCli } from "../support/spawnCli.js"

// OpenTelemetry export from the outside, where a process is the point: the built CLI ending on a signal and the built
// MCP server over stdio, a loopback provider, and a loopback OTLP/HTTP receiver decoding what the exporter sends
// (protobuf, with OpenTelemetry's own generated code). The rest of the export is tested in-process
// (test/unit/otelExport.test.ts).

const otel = useOtelFixture("pllm-otel-")
const { envFor, freshDir } = otel

describe("OpenTelemetry export", () => {
  it("Ctrl-C: the run ends interrupted, and its spans are exported before the process exits", async () => {
    otel.receiver.spans.length = 0
    otel.fake.reset()
    otel.fake.setScript({ "ot/synth": SYNTH, "ot/slow": { kind: "hang" } })
    const cli = startCli(["ask", PROMPT, "-m", "ot/slow", "-s", "ot/synth"], {
      env: envFor(freshDir("sigint"), { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url })
    })
    await otel.fake.waitForRequests(1, 30_000)
    cli.child.kill("SIGINT")
    const r = await cli.done
    expect(r.code, r.stderr).toBe(130)
    const run = otel.receiver.spans.find((s) => s.name === "parallel_llm.run")
    expect(run?.events.map((e) => [e.name, e.attributes["parallel_llm.reason"]])).toContainEqual(["parallel_llm.cut", "interrupted"])
    expect(otel.receiver.spans.find((s) => s.name === "chat ot/slow")?.attributes["parallel_llm.outcome"]).toBe("cancelled")
  })

  it("an MCP tools/call with _meta.traceparent continues the caller's trace; the run goes under the call", async () => {
    otel.receiver.spans.length = 0
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const callerSpanId = "00f067aa0ba902b7"
    const mcp = await connectMcp(serverEnv({
      baseUrl: otel.fake.url,
      outputDir: freshDir("mcp"),
      apiKey: "sk-or-test",
      models: ["ot/one", "ot/two"],
      synthesizer: "ot/synth",
      extra: { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url, PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none" }
    }))
    try {
      const result = await mcp.client.callTool({
        name: "process_prompt",
        arguments: { prompt: PROMPT },
        _meta: { traceparent: `00-${traceId}-${callerSpanId}-01` }
      })
      expect(result.isError, JSON.stringify(result)).toBeFalsy()
    } finally {
      // `serve` ending flushes what is left.
      await mcp.close()
    }
    const call = otel.receiver.spans.find((s) => s.name === "tools/call process_prompt")
    expect(call).toMatchObject({ traceId, parentSpanId: callerSpanId, kind: 2 })
    expect(call?.attributes["mcp.method.name"]).toBe("tools/call")
    const run = otel.receiver.spans.find((s) => s.name === "parallel_llm.run")
    expect(run).toMatchObject({ traceId, parentSpanId: call?.spanId })
    const calls = otel.receiver.spans.filter((s) => s.parentSpanId === run?.spanId && s.name.startsWith("chat "))
    expect(calls.map((c) => c.name).sort()).toEqual(["chat ot/one", "chat ot/synth", "chat ot/two"])
  })
})
