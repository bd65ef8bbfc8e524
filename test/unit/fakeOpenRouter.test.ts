import * as http from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { type FakeOpenRouter, type FakeOpenRouterOptions, makeGate, startFakeOpenRouter } from "../support/fakeOpenRouter.js"
import { waitFor } from "../support/waitFor.js"

let fake: FakeOpenRouter | undefined

async function start(options?: FakeOpenRouterOptions): Promise<FakeOpenRouter> {
  fake = await startFakeOpenRouter(options)
  return fake
}

afterEach(async () => {
  await fake?.close()
  fake = undefined
})

function chat(f: FakeOpenRouter, model: string, extra: Record<string, unknown> = {}, init: RequestInit = {}): Promise<Response> {
  return fetch(`${f.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer test-key" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], temperature: 0.2, max_tokens: 100, ...extra }),
    ...init
  })
}

interface Completion {
  id: string
  model: string
  object: string
  choices: Array<{ index: number; message: { role: string; content: string | null }; finish_reason: string }>
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost: number }
}

interface Chunk {
  model?: string
  object?: string
  choices: Array<{ index: number; delta: { content?: string | null }; finish_reason: string | null }>
  usage?: { total_tokens: number; cost: number }
  error?: { code: number | string; message: string }
}

function parseSse(text: string): { comments: string[]; chunks: Chunk[]; done: boolean } {
  const comments: string[] = []
  const chunks: Chunk[] = []
  let done = false
  for (const event of text.split("\n\n")) {
    if (event === "") continue
    if (event.startsWith(":")) comments.push(event)
    else if (event === "data: [DONE]") done = true
    else if (event.startsWith("data: ")) chunks.push(JSON.parse(event.slice("data: ".length)) as Chunk)
    else throw new Error(`unexpected SSE line: ${event}`)
  }
  return { comments, chunks, done }
}

describe("fake OpenRouter", () => {
  it("answers ok as JSON with the served model and usage", async () => {
    const f = await start({
      script: { "a/one": { kind: "ok", servedBy: "a/one-v2", usage: { prompt_tokens: 3, completion_tokens: 4, cost: 0.5 } } }
    })
    expect(f.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/)

    const res = await chat(f, "a/one")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("application/json")
    const body = (await res.json()) as Completion
    expect(body.object).toBe("chat.completion")
    expect(body.model).toBe("a/one-v2")
    expect(body.choices[0]?.message).toEqual({ role: "assistant", content: "Answer from a/one" })
    expect(body.choices[0]?.finish_reason).toBe("stop")
    expect(body.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, cost: 0.5 })

    const res2 = await chat(f, "b/default")
    const body2 = (await res2.json()) as Completion
    expect(body2.model).toBe("b/default")
    expect(body2.choices[0]?.message.content).toBe("Answer from b/default")
    expect(body2.usage.total_tokens).toBe(30)

    expect(f.requests).toHaveLength(2)
    const first = f.requests[0]
    expect(first?.model).toBe("a/one")
    expect(first?.attempt).toBe(1)
    expect(first?.aborted).toBe(false)
    expect(first?.headers.authorization).toBe("Bearer test-key")
    expect(first?.body).toMatchObject({ model: "a/one", temperature: 0.2, max_tokens: 100 })
    expect(f.inFlight).toBe(0)
    expect(f.maxInFlight).toBe(1)
  })

  it("streams ok as SSE with keep-alive, deltas, stop, usage and [DONE]", async () => {
    const f = await start({ script: { "s/model": { kind: "ok", content: "Hello streaming world" } } })
    const res = await chat(f, "s/model", { stream: true })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/event-stream")
    const { comments, chunks, done } = parseSse(await res.text())
    expect(comments).toEqual([": OPENROUTER PROCESSING"])
    expect(done).toBe(true)
    const deltas = chunks.filter((c) => c.choices.length > 0 && c.choices[0]?.finish_reason === null)
    expect(deltas.map((c) => c.choices[0]?.delta.content).join("")).toBe("Hello streaming world")
    expect(deltas.length).toBeGreaterThan(1)
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "s/model")).toBe(true)
    const stop = chunks.find((c) => c.choices[0]?.finish_reason === "stop")
    expect(stop).toBeDefined()
    const usage = chunks[chunks.length - 1]
    expect(usage?.choices).toEqual([])
    expect(usage?.usage?.total_tokens).toBe(30)
  })

  it("streams a mid-stream error chunk and ends without [DONE]", async () => {
    const f = await start({ script: { "s/err": { kind: "streamError", partial: "Half an", code: 502, message: "boom" } } })
    const { chunks, done } = parseSse(await (await chat(f, "s/err", { stream: true })).text())
    expect(done).toBe(false)
    const last = chunks[chunks.length - 1]
    expect(last?.error).toEqual({ code: 502, message: "boom" })
    expect(last?.choices[0]?.finish_reason).toBe("error")
    expect(chunks.slice(0, -1).map((c) => c.choices[0]?.delta.content).join("")).toBe("Half an")
  })

  it("sends status errors with a Retry-After header", async () => {
    const f = await start({ script: { "r/limited": { kind: "status", status: 429, retryAfter: 2 } } })
    const res = await chat(f, "r/limited")
    expect(res.status).toBe(429)
    expect(res.headers.get("retry-after")).toBe("2")
    const body = (await res.json()) as { error: { code: number; message: string } }
    expect(body.error.code).toBe(429)
    expect(typeof body.error.message).toBe("string")
  })

  it("follows the per-model attempt sequence, the last behavior repeating", async () => {
    const f = await start({ script: { "x/flaky": [{ kind: "status", status: 500 }, { kind: "ok", content: "finally" }] } })
    expect((await chat(f, "x/flaky")).status).toBe(500)
    const second = await chat(f, "x/flaky")
    expect(second.status).toBe(200)
    expect(((await second.json()) as Completion).choices[0]?.message.content).toBe("finally")
    expect((await chat(f, "x/flaky")).status).toBe(200)
    expect(f.requests.map((r) => r.attempt)).toEqual([1, 2, 3])

    f.setScript({ "x/flaky": [{ kind: "status", status: 503, retryAfter: 1 }, { kind: "ok" }] })
    expect((await chat(f, "x/flaky")).status).toBe(503)
    expect(f.requests[3]?.attempt).toBe(1)
  })

  it("marks a hung request aborted when the client aborts", async () => {
    const f = await start({ script: { "h/hang": { kind: "hang" } } })
    const controller = new AbortController()
    const pending = chat(f, "h/hang", {}, { signal: controller.signal })
    await f.waitForRequests(1, 1_000)
    expect(f.inFlight).toBe(1)
    controller.abort()
    await expect(pending).rejects.toThrow()
    await waitFor("the fake to see the request aborted", () => f.abortedRequests().length === 1, 1_000)
    expect(f.inFlight).toBe(0)
    expect(f.abortedRequests()[0]?.model).toBe("h/hang")
    expect(f.abortedRequests()[0]?.endedAt).toBeTypeOf("number")
  })

  it("cancels a delayed answer when the client aborts", async () => {
    const f = await start({ script: { "d/slow": { kind: "ok", delayMs: 10_000 } } })
    const controller = new AbortController()
    const pending = chat(f, "d/slow", {}, { signal: controller.signal })
    await f.waitForRequests(1, 1_000)
    controller.abort()
    await expect(pending).rejects.toThrow()
    await waitFor("the fake to see the request aborted", () => f.abortedRequests().length === 1, 1_000)
    expect(f.inFlight).toBe(0)
  })

  it("resets the connection without an answer", async () => {
    const f = await start({ script: { "r/reset": { kind: "reset" } } })
    await expect(chat(f, "r/reset")).rejects.toThrow(TypeError)
    expect(f.requests).toHaveLength(1)
    expect(f.abortedRequests()).toHaveLength(0)
  })

  it("serves other failure shapes: html, malformed, errorIn200, empty choices", async () => {
    const f = await start({
      script: {
        "p/html": { kind: "html" },
        "p/bad": { kind: "malformed" },
        "p/err200": { kind: "errorIn200", code: 500, message: "oops" },
        "p/empty": { kind: "emptyChoices" },
        "p/null": { kind: "nullContent" },
        "p/huge": { kind: "huge", bytes: 300_000 },
        "p/trickle": { kind: "trickle", content: "slow answer", chunkDelayMs: 5, chunks: 3 }
      }
    })
    const html = await chat(f, "p/html")
    expect(html.status).toBe(502)
    expect(html.headers.get("content-type")).toContain("text/html")
    expect(await html.text()).toContain("<html>")

    const bad = await chat(f, "p/bad")
    expect(bad.status).toBe(200)
    await expect(bad.json()).rejects.toThrow()

    const err200 = await chat(f, "p/err200")
    expect(err200.status).toBe(200)
    expect(await err200.json()).toEqual({ error: { code: 500, message: "oops" } })

    expect(((await (await chat(f, "p/empty")).json()) as Completion).choices).toEqual([])
    expect(((await (await chat(f, "p/null")).json()) as Completion).choices[0]?.message.content).toBeNull()
    expect(((await (await chat(f, "p/huge")).json()) as Completion).choices[0]?.message.content).toHaveLength(300_000)
    expect(((await (await chat(f, "p/trickle")).json()) as Completion).choices[0]?.message.content).toBe("slow answer")
  })

  it("lists models, including every scripted model, and honours setModels", async () => {
    const f = await start({ script: { "custom/model-x": { kind: "ok" } } })
    const res = await fetch(`${f.url}/models`)
    expect(res.status).toBe(200)
    const { data } = (await res.json()) as {
      data: Array<
        {
          id: string
          name: string
          context_length: number
          pricing: { prompt: string; completion: string }
          supported_parameters: string[]
        }
      >
    }
    const ids = data.map((m) => m.id)
    expect(ids).toContain("custom/model-x")
    expect(ids).toContain("openai/gpt-4o-mini")
    const custom = data.find((m) => m.id === "custom/model-x")
    expect(custom?.pricing).toMatchObject({ prompt: "0.000001", completion: "0.000002" })
    expect(typeof custom?.context_length).toBe("number")
    expect(custom?.supported_parameters).toContain("temperature")

    f.setModels([{ id: "only/one", context_length: 4096, pricing: { prompt: "0.5", completion: "1" } }])
    const again = (await (await fetch(`${f.url}/models`)).json()) as { data: Array<{ id: string; context_length: number }> }
    expect(again.data.map((m) => [m.id, m.context_length])).toEqual([["only/one", 4096]])

    const unknown = await fetch(`${f.url}/nope`)
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: number } }).error.code).toBe(404)
  })

  it("requires the key when requireKey is set", async () => {
    const f = await start({ requireKey: "secret" })
    const denied = await chat(f, "k/model")
    expect(denied.status).toBe(401)
    expect(await denied.json()).toEqual({ error: { code: 401, message: "No auth credentials found" } })
    const allowed = await chat(f, "k/model", {}, { headers: { "content-type": "application/json", authorization: "Bearer secret" } })
    expect(allowed.status).toBe(200)
    expect(f.requests.map((r) => r.attempt)).toEqual([0, 1])
  })

  it("reuses one keep-alive connection across sequential requests", async () => {
    const f = await start()
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const post = (model: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const payload = JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] })
          const req = http.request(
            `${f.url}/chat/completions`,
            { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } },
            (res) => {
              res.resume()
              res.on("end", () => resolve(res.statusCode ?? 0))
              res.on("error", reject)
            }
          )
          req.on("error", reject)
          req.end(payload)
        })
      for (let i = 0; i < 5; i++) expect(await post(`k/m${i}`)).toBe(200)
      expect(f.connections).toBe(1)
      expect(f.requests).toHaveLength(5)

      f.reset()
      expect(f.connections).toBe(0)
      expect(f.requests).toHaveLength(0)
    } finally {
      agent.destroy()
    }
  })

  it("tracks concurrency and closes promptly with open requests", async () => {
    const f = await start({ default: { kind: "ok", delayMs: 50 }, script: { "h/hang": { kind: "hang" } } })
    const results = await Promise.all([chat(f, "c/1"), chat(f, "c/2"), chat(f, "c/3")])
    expect(results.map((r) => r.status)).toEqual([200, 200, 200])
    expect(f.maxInFlight).toBe(3)

    const hung = chat(f, "h/hang").catch((e: unknown) => e)
    await f.waitForRequests(4, 1_000)
    // close() ends the hanging request itself (a server that waited for it would never close): the client sees it cut.
    await f.close()
    expect(await hung).toBeInstanceOf(Error)
  })
})

describe("a gate of the fake", () => {
  it("closed twice, still lets through at the next open what waited since the first close", async () => {
    const gate = makeGate()
    let passed = 0
    void gate.until().then(() => passed++)
    gate.close()
    void gate.until().then(() => passed++)
    const turn = () => new Promise((resolve) => setImmediate(resolve))
    await turn()
    expect(passed).toBe(0)
    gate.open()
    await turn()
    expect(passed).toBe(2)
    // Closed again after an open, it holds what comes next.
    gate.close()
    let held = true
    void gate.until().then(() => (held = false))
    await turn()
    expect(held).toBe(true)
    gate.open()
  })
})
