import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { otelExportOf } from "../../src/settings/otelEnvironment.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { PROMPT, SYNTH, useOtelFixture } from "../support/otelFixture.js"
import { type ReceivedSpan, startOtlpReceiver } from "../support/otlpReceiver.js"

// OpenTelemetry export of the command line's runs, in-process (the command tree and its real services: the
// exporter's HTTP client included), against a loopback provider and a loopback OTLP/HTTP receiver decoding what the
// exporter sends (protobuf, with OpenTelemetry's own generated code). What needs a process (a signal's flush, the MCP
// server over stdio) is in test/e2e/otel.test.ts.

const otel = useOtelFixture("pllm-otel-unit-")
const { envFor, freshDir } = otel

const RANK = ["ask", PROMPT, "-m", "ot/one", "-m", "ot/two", "-m", "ot/three", "-s", "ot/synth", "--strategy", "rank"]

/** The spans of one trace: the run's own and every span under it. */
const traceOf = (spans: ReadonlyArray<ReceivedSpan>, run: ReceivedSpan) => spans.filter((s) => s.traceId === run.traceId)

describe("OpenTelemetry export", () => {
  it("ask --strategy rank: one trace, the run span over a GenAI span per candidate, judge and synthesis call, no text", async () => {
    otel.receiver.spans.length = 0
    const headers = "x-collector-key=otlp-secret-123"
    const r = await runCliInProcess(RANK, {
      env: envFor(freshDir("rank"), {
        OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: headers,
        OTEL_SERVICE_NAME: "otel-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test"
      })
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toContain("otlp-secret-123")
    expect(otel.receiver.requests.every((q) => q.path === "/v1/traces" && q.contentType === "application/x-protobuf")).toBe(true)
    expect(otel.receiver.requests[0]?.headers["x-collector-key"]).toBe("otlp-secret-123")

    const runs = otel.receiver.spans.filter((s) => s.name === "parallel_llm.run")
    expect(runs).toHaveLength(1)
    const run = runs[0]!
    expect(run.parentSpanId).toBeUndefined()
    expect(run.resource["service.name"]).toBe("otel-test")
    expect(run.resource["deployment.environment"]).toBe("test")
    const calls = traceOf(otel.receiver.spans, run).filter((s) => s.attributes["gen_ai.operation.name"] === "chat")
    // Three candidates, three judges, one synthesis: each a child of the run span, in its trace.
    expect(calls.map((c) => `${c.attributes["parallel_llm.role"]} ${c.name}`).sort()).toEqual([
      "candidate chat ot/one",
      "candidate chat ot/three",
      "candidate chat ot/two",
      "judge chat ot/one",
      "judge chat ot/three",
      "judge chat ot/two",
      "synthesis chat ot/synth"
    ])
    for (const call of calls) {
      expect(call.parentSpanId).toBe(run.spanId)
      expect(call.kind).toBe(3) // client
      expect(call.attributes).toMatchObject({
        "gen_ai.provider.name": "openai",
        "gen_ai.response.model": call.attributes["gen_ai.request.model"],
        "gen_ai.usage.input_tokens": 11,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.response.finish_reasons": ["stop"],
        "parallel_llm.cost_usd": 0.0001,
        "parallel_llm.attempts": 1,
        "parallel_llm.outcome": "ok"
      })
    }
    // No prompt or answer text anywhere unless asked for.
    const everything = JSON.stringify(otel.receiver.spans)
    expect(everything).not.toContain("secret number")
    expect(everything).not.toContain("It is 18")
    expect(everything).not.toContain("otlp-secret-123")
  })

  it("--trace-content: the prompt and the answer are in the call spans", async () => {
    otel.receiver.spans.length = 0
    const r = await runCliInProcess([...RANK, "--trace-content"], {
      env: envFor(freshDir("content"), { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url })
    })
    expect(r.code, r.stderr).toBe(0)
    const synthesis = otel.receiver.spans.find((s) => s.attributes["parallel_llm.role"] === "synthesis")
    expect(String(synthesis?.attributes["gen_ai.output.messages"])).toContain("#### 18")
    const candidate = otel.receiver.spans.find((s) => s.attributes["parallel_llm.role"] === "candidate")
    expect(String(candidate?.attributes["gen_ai.input.messages"])).toContain("secret number")
    expect(String(candidate?.attributes["gen_ai.output.messages"])).toContain("It is 18")
  })

  it("a retry is an event of its call's span", async () => {
    otel.receiver.spans.length = 0
    otel.fake.reset()
    otel.fake.setScript({
      "ot/synth": { kind: "ok", content: "#### 18" },
      "ot/flaky": [{ kind: "status", status: 503 }, { kind: "ok", content: "fine" }]
    })
    const r = await runCliInProcess(["ask", PROMPT, "-m", "ot/flaky", "-s", "ot/synth"], {
      env: envFor(freshDir("retry"), { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url })
    })
    expect(r.code, r.stderr).toBe(0)
    const call = otel.receiver.spans.find((s) => s.name === "chat ot/flaky")
    expect(call?.attributes["parallel_llm.attempts"]).toBe(2)
    expect(call?.events.map((e) => [e.name, e.attributes["parallel_llm.attempt"], e.attributes["error.type"]])).toEqual([
      ["parallel_llm.attempt_failed", 1, "ProviderFailure"]
    ])
  })

  it("a quorum's cut is an event of the run span, and the call it stopped ends cancelled", async () => {
    otel.receiver.spans.length = 0
    otel.fake.setScript({ "ot/synth": SYNTH, "ot/slow": { kind: "hang" } })
    const r = await runCliInProcess(["ask", PROMPT, "-m", "ot/one", "-m", "ot/slow", "-s", "ot/synth", "--quorum", "1", "--grace", "0"], {
      env: envFor(freshDir("quorum"), { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url })
    })
    expect(r.code, r.stderr).toBe(0)
    const run = otel.receiver.spans.find((s) => s.name === "parallel_llm.run")
    expect(run?.events.map((e) => [e.name, e.attributes["parallel_llm.reason"]])).toContainEqual(["parallel_llm.cut", "quorum"])
    const slow = otel.receiver.spans.find((s) => s.name === "chat ot/slow")
    expect(slow?.attributes["parallel_llm.outcome"]).toBe("cancelled")
    expect(slow?.events.map((e) => e.name)).toContain("parallel_llm.cut")
  })

  it("batch: each prompt is a trace of its own, a batch item span with its run under it", async () => {
    otel.receiver.spans.length = 0
    otel.fake.setScript({ "ot/synth": SYNTH })
    const dir = freshDir("batch")
    const input = path.join(dir, "questions.jsonl")
    fs.writeFileSync(input, [{ id: "q1", prompt: PROMPT }, { id: "q2", prompt: "And 3+1?" }].map((l) => JSON.stringify(l)).join("\n"))
    const r = await runCliInProcess(["batch", input, "-m", "ot/one", "-s", "ot/synth"], {
      env: envFor(path.join(dir, "runs"), { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url })
    })
    expect(r.code, r.stderr).toBe(0)
    const items = otel.receiver.spans.filter((s) => s.name === "parallel_llm.batch_item")
    expect(items.map((i) => i.attributes["parallel_llm.batch.item"]).sort()).toEqual(["q1", "q2"])
    expect(new Set(items.map((i) => i.traceId)).size).toBe(2)
    for (const item of items) {
      expect(item.parentSpanId).toBeUndefined()
      const run = otel.receiver.spans.find((s) => s.name === "parallel_llm.run" && s.parentSpanId === item.spanId)
      expect(run?.traceId).toBe(item.traceId)
      expect(otel.receiver.spans.filter((s) => s.parentSpanId === run?.spanId).map((s) => s.name).sort()).toEqual([
        "chat ot/one",
        "chat ot/synth"
      ])
    }
  })

  it("OTEL_BSP_SCHEDULE_DELAY: spans go while the command runs, not only at its end; a bad value is named", async () => {
    otel.receiver.requests.length = 0
    otel.fake.setScript({ "ot/synth": SYNTH })
    const r = await runCliInProcess(["ask", PROMPT, "-m", "ot/one", "-s", "ot/synth"], {
      env: envFor(freshDir("schedule"), { OTEL_EXPORTER_OTLP_ENDPOINT: otel.receiver.url, OTEL_BSP_SCHEDULE_DELAY: "1" })
    })
    expect(r.code, r.stderr).toBe(0)
    // Every 5 s by default: a run this short is sent in one request, when the command ends.
    expect(otel.receiver.requests.length).toBeGreaterThan(1)
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
    expect(Either.getOrThrow(otelExportOf({ ...endpoint, OTEL_BSP_SCHEDULE_DELAY: " 250 ", OTEL_BSP_EXPORT_TIMEOUT: "100" })))
      .toMatchObject({
        scheduleDelayMs: 250,
        exportTimeoutMs: 100
      })
    // The traces signal's own variable wins, as for the endpoint.
    expect(Either.getOrThrow(otelExportOf({ ...endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "700" }))).toMatchObject({ requestTimeoutMs: 700 })
    expect(Either.getOrThrow(otelExportOf({ ...endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "700", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "900" })))
      .toMatchObject({ requestTimeoutMs: 900 })
    for (
      const name of [
        "OTEL_BSP_SCHEDULE_DELAY",
        "OTEL_BSP_EXPORT_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"
      ]
    ) {
      for (const bad of ["0", "1.5", "soon"]) {
        expect(otelExportOf({ ...endpoint, [name]: bad })).toEqual(Either.left(`${name}: not a whole number of milliseconds above 0`))
      }
    }
  })

  // Without an endpoint nothing is exported: test/unit/tracing.test.ts (a run here could not reach this receiver anyway).
  it("a collector that is down costs one warning, never the run", async () => {
    const down = await startOtlpReceiver()
    await down.close()
    // The first periodic export fails (and retries) while the run goes on, and the last one at its end fails too:
    // the warning is still said once. The end of the command waits 50 ms for that last export, not 3 s.
    const r = await runCliInProcess(RANK, {
      env: envFor(freshDir("down"), {
        OTEL_EXPORTER_OTLP_ENDPOINT: down.url,
        OTEL_BSP_SCHEDULE_DELAY: "1",
        OTEL_BSP_EXPORT_TIMEOUT: "50"
      })
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("#### 18")
    expect(r.stderr.match(/tracing: cannot export spans to http:\/\/127\.0\.0\.1:\d+\/v1\/traces/g)).toHaveLength(1)
  })
})
