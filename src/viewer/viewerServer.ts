import { HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Console, Duration, Effect, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import { UsageError } from "../domain/errors.js"
import { checkHost, generateToken, secretMatches } from "../mcp/httpGuard.js"
import { makeLiveRuns } from "../mcp/liveRuns.js"
import { readViewerData } from "./readViewerData.js"
import { ACTION_NAMES, type ActionName, type Availability, type HttpEnvelope } from "./viewerData.js"

// `parallel-llm runs open ID`: the viewer page on loopback, for this one run. The printed URL carries a
// one-time token; the first load trades it for a session cookie (HttpOnly, SameSite=Strict, an hour after the
// page last asked) and is redirected to a URL without it, so the token stays out of the history and the
// Referer. Every other request needs the cookie, a loopback Host and no foreign Origin.

const HOST = "127.0.0.1"
const SESSION_MAX_AGE = Duration.hours(1)

/** `runs open` serves runs read-only: an action runs in the process that owns the run (an MCP host's server). */
const readOnly = (runId: string): Readonly<Record<ActionName, Availability>> => ({
  cancel: { available: false, why: "Only the process running a run can cancel it; runs open only shows runs." },
  resynthesize: { available: false, why: `Read-only here: parallel-llm resynth ${runId} --synthesizer MODEL does it.` },
  followUp: { available: false, why: `Read-only here: parallel-llm ask --continue ${runId} "QUESTION" does it.` }
})

/** The page's own script may run, nothing else: its hash in the content security policy. */
const pagePolicy = (page: string): string => {
  const script = /<script>([\s\S]*)<\/script>/.exec(page)?.[1] ?? ""
  const hash = crypto.createHash("sha256").update(script, "utf8").digest("base64")
  return [
    "default-src 'none'",
    `script-src 'sha256-${hash}'`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

const COMMON_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }

const refuse = (status: number, message: string) => HttpServerResponse.text(`${message}\n`, { status, headers: COMMON_HEADERS })

interface Session {
  readonly cookie: string
  readonly origin: string
  readonly token: Redacted.Redacted<string>
}

/** The secrets of this server: the one-time token (spent by its first use) and the session cookie's value. */
const makeAccess = (port: number) => {
  const token = generateToken()
  const session = generateToken()
  const tokenMatches = secretMatches(token)
  const sessionMatches = secretMatches(session)
  let spent = false
  const cookie = `pllm_viewer_${port}`
  return {
    session: { cookie, origin: `http://${HOST}:${port}`, token } satisfies Session,
    /** Whether this is the token, unspent: it is spent by this call. */
    exchange: (given: string): boolean => {
      if (spent || !tokenMatches(given)) return false
      spent = true
      return true
    },
    signedIn: (request: HttpServerRequest.HttpServerRequest): boolean => {
      const value = request.cookies[cookie]
      return value !== undefined && sessionMatches(value)
    },
    withCookie: (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.unsafeSetCookie(response, cookie, Redacted.value(session), {
        httpOnly: true,
        sameSite: "strict",
        path: "/",
        maxAge: SESSION_MAX_AGE
      })
  }
}
type Access = ReturnType<typeof makeAccess>

/** Before any route: a loopback Host, no Origin but this server's own. */
const guard = (origin: string) =>
  HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const host = checkHost(request.headers.host, true)
      if (host === "malformed") return refuse(400, "Bad Request: the Host header must be host[:port]")
      if (host === "foreign") return refuse(403, "Forbidden: this Host is not allowed")
      const from = request.headers.origin
      if (from !== undefined && from !== origin) return refuse(403, "Forbidden: this Origin is not allowed")
      return yield* app
    })
  )

const UNAUTHORIZED = "Unauthorized: open the URL that parallel-llm runs open printed (its token works once)"

const routes = <R>(
  access: Access,
  page: string,
  data: Effect.Effect<HttpEnvelope, { readonly message: string }, R>,
  offered: Readonly<Record<ActionName, Availability>>
) => {
  const policy = pagePolicy(page)
  const home = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = new URL(request.url, access.session.origin).searchParams.get("token")
    if (token !== null) {
      if (!access.exchange(token)) return refuse(401, UNAUTHORIZED)
      return access.withCookie(HttpServerResponse.redirect("/", { status: 303, headers: COMMON_HEADERS }))
    }
    if (!access.signedIn(request)) return refuse(401, UNAUTHORIZED)
    return HttpServerResponse.html(page).pipe(
      HttpServerResponse.setHeaders({ ...COMMON_HEADERS, "content-security-policy": policy, "x-frame-options": "DENY" })
    )
  })
  const view = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!access.signedIn(request)) return refuse(401, UNAUTHORIZED)
    return yield* data.pipe(
      Effect.map((envelope) => access.withCookie(HttpServerResponse.unsafeJson(envelope, { headers: COMMON_HEADERS }))),
      Effect.catchAll((e) => Effect.succeed(refuse(500, e.message)))
    )
  })
  const action = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!access.signedIn(request)) return refuse(401, UNAUTHORIZED)
    const name = ACTION_NAMES.find((n) => request.url === `/actions/${n}`)
    return name === undefined ? refuse(404, "Not Found") : refuse(409, offered[name].available ? "" : offered[name].why)
  })
  return HttpRouter.empty.pipe(
    HttpRouter.get("/", home),
    HttpRouter.get("/view.json", view),
    HttpRouter.post("/actions/:name", action)
  )
}

/**
 * Serves the viewer for run `runId` until interrupted (Ctrl-C): prints the URL to open first. An unknown
 * run is refused before anything listens.
 */
export const serveViewer = Effect.fn("serveViewer")(function*(runId: string, page: string) {
  const runs = yield* makeLiveRuns
  const offered = readOnly(runId)
  const data = readViewerData(runs, runId).pipe(Effect.map((d): HttpEnvelope => ({ data: d, actions: offered })))
  yield* data
  const server = yield* NodeHttpServer.make(() => http.createServer(), { host: HOST, port: 0 }).pipe(
    Effect.mapError((e) =>
      new UsageError({ message: `cannot listen on ${HOST}: ${e.cause instanceof Error ? e.cause.message : "failed"}` })
    )
  )
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  const access = makeAccess(port)
  yield* server.serve(routes(access, page, data, offered), guard(access.session.origin))
  yield* Console.log(`${access.session.origin}/?token=${Redacted.value(access.session.token)}`)
  yield* Console.error(`parallel-llm: the viewer for run ${runId} is served at the URL above (once); Ctrl-C stops it`)
  return yield* Effect.never
})
