import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ModelClient } from "../../src/services/modelClient.js"
import { Settings } from "../../src/services/settings.js"
import { realHttpClientLayer } from "../support/realHttpClient.js"
import { makeTestSettings } from "../support/testSettings.js"

/** A loopback server whose `GET /models` always answers `status`; it counts the requests. */
const startServer = (status: number) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly gets: () => number; readonly server: http.Server }>((resume) => {
      let gets = 0
      const server = http.createServer((req, res) => {
        if (req.method === "GET") gets++
        res.writeHead(status, { "content-type": "application/json" }).end(`{"error":{"code":${status},"message":"no"}}`)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
          gets: () => gets,
          server
        })))
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

/** Asks the real client for its catalogue twice; the number of `GET /models` the server saw. */
const getsForTwoAsks = (status: number) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* startServer(status)
    const layer = ModelClient.Default.pipe(
      Layer.provide(Layer.merge(Settings.Test(makeTestSettings({ baseUrl: server.url })), realHttpClientLayer))
    )
    yield* Effect.gen(function*() {
      const client = yield* ModelClient
      for (let i = 0; i < 2; i++) expect((yield* Effect.either(client.catalogue))._tag).toBe("Left")
    }).pipe(Effect.provide(layer))
    return server.gets()
  }))

describe("the model catalogue of a server that has none", () => {
  it.live("a 404 is kept like a catalogue: the next run does not ask again (one request fewer per run)", () =>
    Effect.gen(function*() {
      expect(yield* getsForTwoAsks(404)).toBe(1)
    }))

  it.live("any other failure is forgotten: the next run asks again", () =>
    Effect.gen(function*() {
      expect(yield* getsForTwoAsks(400)).toBe(2)
    }))
})
