import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { otelExportOf } from "../../src/settings/otelEnvironment.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlpReceiver.js"
import { makeTempDirs } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

// OTEL_EXPORTER_OTLP_PROTOCOL (and its traces-only form): the exporter speaks OTLP/HTTP, as protobuf or as JSON.
// A protocol it does not speak (gRPC) is said in one line at start, and nothing is exported, instead of protobuf
// sent where gRPC was asked for.

const provider = withFakeProvider({ script: { "op/one": { kind: "ok", content: "18" } } })
const tempDir = makeTempDirs("pllm-otlp-protocol-")
let receiver: OtlpReceiver

beforeAll(async () => {
  receiver = await startOtlpReceiver()
})
afterAll(async () => {
  await receiver.close()
})

const ENDPOINT = "http://127.0.0.1:4318"

describe("OTEL_EXPORTER_OTLP_PROTOCOL", () => {
  it("http/protobuf by default, http/json when asked; the traces variable wins; anything else is named in one line", () => {
    const protocolOf = (env: Record<string, string>) =>
      Either.map(otelExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, ...env }), (config) => config?.protocol)
    expect(protocolOf({})).toEqual(Either.right("http/protobuf"))
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toEqual(Either.right("http/json"))
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: " http/protobuf " })).toEqual(Either.right("http/protobuf"))
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" })).toEqual(
      Either.right("http/json")
    )
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toEqual(
      Either.left(
        `OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not spoken here (OTLP/HTTP only): set http/protobuf or http/json, or leave it unset`
      )
    )
    expect(protocolOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/xml" })).toEqual(
      Either.left(
        `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/xml" is not spoken here (OTLP/HTTP only): set http/protobuf or http/json, or leave it unset`
      )
    )
  })

  const ask = (protocol: string) =>
    runCliInProcess(["ask", "What is 9+9?", "-m", "op/one"], {
      env: { ...provider.cliEnv(tempDir()), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }
    })

  it("http/json: the spans go as OTLP/HTTP JSON", async () => {
    receiver.requests.length = 0
    receiver.spans.length = 0
    const r = await ask("http/json")
    expect(r.code, r.stderr).toBe(0)
    expect(receiver.requests.length).toBeGreaterThan(0)
    expect(receiver.requests.every((q) => q.path === "/v1/traces" && q.contentType === "application/json")).toBe(true)
    expect(receiver.spans.map((s) => s.name)).toContain("parallel_llm.run")
  })

  it("grpc: one line at start says so, and nothing is sent; the command still runs", async () => {
    receiver.requests.length = 0
    const r = await ask("grpc")
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`tracing is off: OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not spoken here (OTLP/HTTP only)`)
    expect(receiver.requests).toHaveLength(0)
  })
})
