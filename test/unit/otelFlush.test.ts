import { describe, expect, it } from "vitest"
import { runCliInProcess } from "../support/inProcessCli.js"
import { PROMPT, SYNTH, useOtelFixture } from "../support/otelFixture.js"
import { startOtlpReceiver } from "../support/otlpReceiver.js"
import { waitFor } from "../support/waitFor.js"

// The end of a command against a collector that is slow to answer, in-process: the exports still in flight when the
// command ends are waited for (up to OTEL_BSP_EXPORT_TIMEOUT), not dropped, and one that never ends is cut with a
// warning. The rest of the export is in test/unit/otelExport.test.ts.

const otel = useOtelFixture("pllm-otel-flush-")
const { envFor, freshDir } = otel

const ASK = ["ask", PROMPT, "-m", "ot/one", "-m", "ot/two", "-s", "ot/synth"]

describe("OpenTelemetry export at the end of a command", () => {
  it("a slow collector: the export in flight when the command ends is waited for, and every span arrives", async () => {
    // Each batch is answered only once the run's own span has arrived, which comes in the last export, at the end.
    const slow = await startOtlpReceiver({ answerWhen: (arrived) => arrived.some((s) => s.name === "parallel_llm.run") })
    try {
      // The synthesis waits until a first batch (the candidates' spans) is on its way: that export is in flight,
      // unanswered, when the command ends.
      otel.fake.setScript({ "ot/synth": { ...SYNTH, until: () => waitFor("a first export", () => slow.requests.length > 0) } })
      const r = await runCliInProcess(ASK, {
        env: envFor(freshDir("slow"), { OTEL_EXPORTER_OTLP_ENDPOINT: slow.url, OTEL_BSP_SCHEDULE_DELAY: "1" })
      })
      expect(r.code, r.stderr).toBe(0)
      expect(slow.requests.length).toBeGreaterThan(1)
      expect(slow.dropped.map((s) => s.name)).toEqual([])
      expect(slow.spans.filter((s) => s.name === "parallel_llm.run" || s.name.startsWith("chat ")).map((s) => s.name).sort())
        .toEqual(["chat ot/one", "chat ot/synth", "chat ot/two", "parallel_llm.run"])
      expect(r.stderr).not.toContain("tracing")
    } finally {
      await slow.close()
    }
  })

  it("a collector that never answers: each export gives up after OTEL_EXPORTER_OTLP_TIMEOUT while the command runs, one warning", async () => {
    const mute = await startOtlpReceiver({ answerWhen: "never" })
    try {
      // The synthesis waits until an export was given up (its connection closed, its spans dropped): without a bound
      // of its own, the first export stayed open for as long as the process ran, and this never came.
      otel.fake.setScript({ "ot/synth": { ...SYNTH, until: () => waitFor("an export given up", () => mute.dropped.length > 0) } })
      const r = await runCliInProcess(ASK, {
        env: envFor(freshDir("timeout"), {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${mute.url}/v1/traces?key=query-secret-9`,
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=otlp-secret-456",
          OTEL_EXPORTER_OTLP_TIMEOUT: "100",
          OTEL_BSP_SCHEDULE_DELAY: "1",
          OTEL_BSP_EXPORT_TIMEOUT: "300"
        })
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain("#### 18")
      expect(mute.spans).toEqual([])
      const warnings = r.stderr.split("\n").filter((line) => line.includes("tracing"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(
        /WARN +tracing: cannot export spans to http:\/\/127\.0\.0\.1:\d+\/v1\/traces \(no answer within 100 ms, OTEL_EXPORTER_OTLP_TIMEOUT\); they are dropped, the work goes on$/
      )
      for (const secret of ["query-secret-9", "otlp-secret-456"]) expect(r.stderr).not.toContain(secret)
    } finally {
      await mute.close()
    }
  })

  it("a collector that never answers: the command ends once the bound is spent, with one warning naming the endpoint", async () => {
    const mute = await startOtlpReceiver({ answerWhen: "never" })
    try {
      otel.fake.setScript({ "ot/synth": SYNTH })
      const r = await runCliInProcess(ASK, {
        env: envFor(freshDir("mute"), {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${mute.url}/v1/traces?key=query-secret-8`,
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=otlp-secret-123",
          // The last export reaches the collector within ~3-25 ms of being sent (measured under load): a 100 ms bound
          // still lets it arrive before the end cuts it.
          OTEL_BSP_EXPORT_TIMEOUT: "100"
        })
      })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain("#### 18")
      expect(mute.requests.length).toBeGreaterThan(0)
      expect(mute.spans).toEqual([])
      const warnings = r.stderr.split("\n").filter((line) => line.includes("tracing"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(
        /WARN +tracing: the collector at http:\/\/127\.0\.0\.1:\d+\/v1\/traces did not answer within 100 ms \(OTEL_BSP_EXPORT_TIMEOUT\): the spans still being sent are dropped$/
      )
      for (const secret of ["query-secret-8", "otlp-secret-123"]) expect(r.stderr).not.toContain(secret)
    } finally {
      await mute.close()
    }
  })
})
