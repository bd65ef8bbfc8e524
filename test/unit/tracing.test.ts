import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Effect, Either, Layer, Option, Tracer } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { callerSpan } from "../../src/mcp/traceContext.js"
import type { ServiceOverrides } from "../../src/runCli.js"
import { ModelClient } from "../../src/services/modelClient.js"
import { otelExportOf } from "../../src/settings/otelEnvironment.js"
import { runCliInProcess } from "../support/inProcessCli.js"
import { realHttpClientLayer } from "../support/realHttpClient.js"
import { tempRoot } from "../support/tempDirs.js"
import { withFakeProvider } from "../support/withFakeProvider.js"

describe("OpenTelemetry's variables", () => {
  it("no endpoint: no export; the base endpoint gets /v1/traces, the traces endpoint is used as it is", () => {
    expect(otelExportOf({})).toEqual(Either.right(undefined))
    expect(otelExportOf({ OTEL_EXPORTER_OTLP_HEADERS: "a=b" })).toEqual(Either.right(undefined))
    const base = otelExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })
    expect(Either.getOrThrow(base)).toEqual({
      url: "http://collector:4318/v1/traces",
      protocol: "http/protobuf",
      headers: {},
      serviceName: "parallel-llm",
      resourceAttributes: {},
      scheduleDelayMs: 5_000,
      exportTimeoutMs: 3_000,
      requestTimeoutMs: 10_000
    })
    const traces = otelExportOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://cloud.langfuse.com/api/public/otel/v1/traces"
    })
    expect(Either.getOrThrow(traces)?.url).toBe("https://cloud.langfuse.com/api/public/otel/v1/traces")
  })

  it("headers and resource attributes are key=value lists, percent-decoded; the service name comes from either", () => {
    const config = Either.getOrThrow(otelExportOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20cGs6c2s=, x-team = blue",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,deployment.environment=prod"
    }))
    expect(config?.headers).toEqual({ Authorization: "Basic cGs6c2s=", "x-team": "blue" })
    expect(config?.serviceName).toBe("from-attributes")
    expect(config?.resourceAttributes["deployment.environment"]).toBe("prod")
    const named = otelExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SERVICE_NAME: "mine" })
    expect(Either.getOrThrow(named)?.serviceName).toBe("mine")
  })

  it("a bad variable is named in one line that never quotes a header's value", () => {
    const headers = otelExportOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "ok=1,sk-secret-value"
    })
    expect(headers).toEqual(Either.left("OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value"))
    const url = otelExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })
    expect(url).toEqual(Either.left("OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL"))
    const attributes = otelExportOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_RESOURCE_ATTRIBUTES: "=x" })
    expect(attributes).toEqual(Either.left("OTEL_RESOURCE_ATTRIBUTES: entry 1 is not key=value"))
  })
})

describe("an MCP request's _meta.traceparent", () => {
  it("a W3C traceparent is the caller's span; anything else is ignored", () => {
    const span = callerSpan({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", other: 1 })
    expect(Option.map(span, (s) => [s.traceId, s.spanId, s.sampled])).toEqual(
      Option.some(["4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true])
    )
    expect(Option.map(callerSpan({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" }), (s) => s.sampled))
      .toEqual(Option.some(false))
    for (
      const bad of [
        undefined,
        {},
        { traceparent: 42 },
        { traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
        { traceparent: "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01" },
        { traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" },
        { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01" },
        { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra" }
      ]
    ) expect(callerSpan(bad)).toEqual(Option.none())
  })
})

// The upstream side, in process over loopback: requests to OpenRouter carry the run as `session_id` and a
// trace (Broadcast); another server gets neither (it may refuse fields it does not know).
const { root: tmp, freshDir } = tempRoot("pllm-tracing-")
const OPENROUTER = "https://openrouter.ai/api/v1"

const provider = withFakeProvider({ default: { kind: "ok", content: "It is 18." } })
/** The real provider client, its OpenRouter URLs sent to the loopback fake instead. */
const toFake = Layer.fresh(ModelClient.Default).pipe(
  Layer.provide(Layer.effect(
    HttpClient.HttpClient,
    Effect.map(
      HttpClient.HttpClient,
      (client) =>
        HttpClient.mapRequest(client, (request) => HttpClientRequest.setUrl(request, request.url.replace(OPENROUTER, provider.fake.url)))
    )
  )),
  Layer.provide(realHttpClientLayer)
)

/** Every span Effect makes in the command, by name: the default tracer's, recorded. */
const recordingTracer = (names: Array<string>) =>
  Layer.unwrapEffect(Effect.map(Effect.tracer, (native) =>
    Layer.setTracer(Tracer.make({
      span: (name, ...rest) => {
        names.push(name)
        return native.span(name, ...rest)
      },
      context: native.context
    }))))

const ask = (baseUrl: string, overrides: ServiceOverrides = toFake) =>
  runCliInProcess(["ask", "What is 9+9?", "-m", "tr/one", "-m", "tr/two", "-s", "tr/synth", "--json"], {
    env: {
      HOME: tmp,
      OPENROUTER_API_KEY: "sk-or-v1-0123456789abcdef",
      OPENROUTER_BASE_URL: baseUrl,
      PARALLEL_LLM_OUTPUT_DIR: freshDir("ask"),
      PARALLEL_LLM_FALLBACK_SYNTHESIZERS: "none"
    },
    overrides
  })

describe("upstream requests", () => {
  it("to OpenRouter: session_id is the run id, trace.trace_id the run's trace, generation_name the call's role", async () => {
    provider.fake.reset()
    const r = await ask(OPENROUTER)
    expect(r.code, r.stderr).toBe(0)
    const runId = path.basename((JSON.parse(r.stdout) as { runDir: string }).runDir)
    const bodies = provider.fake.chatRequests().map((q) =>
      q.body as { model: string; session_id?: string; trace?: Record<string, unknown> }
    )
    expect(bodies).toHaveLength(3)
    const traceIds = new Set(bodies.map((b) => b.trace?.trace_id))
    expect(traceIds.size).toBe(1)
    expect([...traceIds][0]).toMatch(/^[0-9a-f]{32}$/)
    for (const body of bodies) {
      expect(body.session_id).toBe(runId)
      expect(body.trace).toMatchObject({
        trace_name: "parallel-llm run",
        generation_name: body.model === "tr/synth" ? "synthesis" : "candidate"
      })
      // Spans are not exported: no span of ours to nest under.
      expect(body.trace?.parent_span_id).toBeUndefined()
    }
  })

  it("to another server: neither field; and without an OTLP endpoint, no span of ours is made", async () => {
    provider.fake.reset()
    const names: Array<string> = []
    const r = await ask(provider.fake.url, recordingTracer(names))
    expect(r.code, r.stderr).toBe(0)
    for (const request of provider.fake.chatRequests()) {
      expect(request.body).not.toHaveProperty("session_id")
      expect(request.body).not.toHaveProperty("trace")
    }
    // The recorder saw the command's own spans (Effect.fn's), none of ours.
    expect(names).toContain("ask")
    expect(names.filter((name) => name.startsWith("chat ") || name.startsWith("parallel_llm."))).toEqual([])
  })
})
