import { HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Clock, Console, Duration, Effect, Redacted } from "effect"
import * as http from "node:http"
import { UsageError } from "../domain/errors.js"
import { checkHost } from "../mcp/httpGuard.js"
import { makeLiveRuns } from "../mcp/liveRuns.js"
import { readRunView } from "../mcp/runView.js"
import { makeViewerAccess, VIEWER_LOGIN_TTL, VIEWER_PATH, VIEWER_SESSION_TTL } from "../mcp/site/viewerAccess.js"
import { viewerRouter } from "../mcp/site/viewerRoutes.js"

// `parallel-llm runs open ID`: the viewer's routes (viewerRoutes.ts, the same as `serve --http`'s) on
// loopback, for this one run. The printed URL carries a one-time token; the first load trades it for a
// session cookie and is redirected to the address without it. The Host must be a loopback name.

const HOST = "127.0.0.1"

/** Before any route: a loopback Host (DNS rebinding: a foreign name that resolves here is refused). */
const loopbackOnly = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const host = checkHost(request.headers.host, true)
    if (host === "malformed") return HttpServerResponse.text("Bad Request: the Host header must be host[:port]\n", { status: 400 })
    if (host === "foreign") return HttpServerResponse.text("Forbidden: this Host is not allowed\n", { status: 403 })
    return yield* app
  })
)

/**
 * Serves the viewer for run `runId` until interrupted (Ctrl-C): prints the URL to open first. An unknown
 * run is refused before anything listens.
 */
export const serveViewer = Effect.fn("serveViewer")(function*(runId: string, page: string) {
  const runs = yield* makeLiveRuns
  yield* readRunView(runs, runId)
  const server = yield* NodeHttpServer.make(() => http.createServer(), { host: HOST, port: 0 }).pipe(
    Effect.mapError((e) =>
      new UsageError({ message: `cannot listen on ${HOST}: ${e.cause instanceof Error ? e.cause.message : "failed"}` })
    )
  )
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  const access = makeViewerAccess({
    cookieName: `pllm_viewer_${port}`,
    sessionMs: Duration.toMillis(VIEWER_SESSION_TTL),
    loginMs: Duration.toMillis(VIEWER_LOGIN_TTL),
    maxPending: 1
  })
  const unauthorized = "Unauthorized: open the URL that parallel-llm runs open printed (its token works once)"
  const router = viewerRouter({ page, access, bearer: undefined, runs, only: runId, unauthorized })
  yield* server.serve(router, loopbackOnly)
  const token = access.issueLogin(yield* Clock.currentTimeMillis)
  yield* Console.log(`http://${HOST}:${port}${VIEWER_PATH}/${runId}?token=${Redacted.value(token)}`)
  yield* Console.error(
    `parallel-llm: the viewer for run ${runId} is served at the URL above (once, within ${
      Duration.format(VIEWER_LOGIN_TTL)
    }); Ctrl-C stops it`
  )
  return yield* Effect.never
})
