import { HttpApp, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Clock, Config, Console, Duration, Effect, Either, Option, Predicate, Redacted } from "effect"
import * as http from "node:http"
import { SettingsError, UsageError } from "../domain/errors.js"
import { stripControl } from "../domain/text.js"
import { Settings } from "../services/settings.js"
import { readViewerPage } from "../services/viewerPage.js"
import type { SettingsValue } from "../settings/values.js"
import { logShutdown, packageVersion } from "./connection.js"
import { checkHost, generateToken, hostInUrl, isLoopbackHost, makeTokenCheck, originAllowed, tokenProblem } from "./httpGuard.js"
import { makeBodyCheck, makeRefusalLog, type RefusalLog, refuse, remoteOf } from "./httpRefusals.js"
import { makeSessions, type Sessions } from "./httpSessions.js"
import { type LiveRuns, makeLiveRuns } from "./liveRuns.js"
import { serverOnly } from "./logSink.js"
import { makeRedactor } from "./redact.js"
import { makeViewerAccess, VIEWER_LOGIN_TTL, VIEWER_PATH, VIEWER_SESSION_TTL } from "./site/viewerAccess.js"
import { viewerRouter, type ViewerSite } from "./site/viewerRoutes.js"

export interface HttpServeOptions {
  readonly host: string
  /** 0: any free port (the one chosen is printed). */
  readonly port: number
}

const TOKEN_ENV = "PARALLEL_LLM_HTTP_TOKEN"
const MIN_TOKEN_LENGTH = 16
/** On shutdown, how long the requests waiting for the runs just cancelled get to answer. */
const SHUTDOWN_GRACE_MS = 2_000

/** The token from the environment; an empty variable counts as unset, one that can never match is refused. */
const tokenFromEnvironment = Config.option(Config.redacted(TOKEN_ENV)).pipe(
  Effect.map(Option.filter((token) => Redacted.value(token).trim() !== "")),
  Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>()),
  Effect.flatMap((token): Effect.Effect<Option.Option<Redacted.Redacted<string>>, SettingsError> => {
    if (Option.isNone(token)) return Effect.succeed(token)
    const problem = tokenProblem(Redacted.value(token.value))
    if (problem !== undefined) return new SettingsError({ setting: TOKEN_ENV, message: `${TOKEN_ENV} ${problem}` })
    return Redacted.value(token.value).length < MIN_TOKEN_LENGTH
      ? new SettingsError({ setting: TOKEN_ENV, message: `${TOKEN_ENV} must be at least ${MIN_TOKEN_LENGTH} characters` })
      : Effect.succeed(token)
  })
)

/** What a browser on an allowed origin needs to call `/mcp` (the origin was checked before). */
const corsHeaders = (origin: string | undefined): Record<string, string> =>
  origin === undefined ? {} : {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": "GET, POST, DELETE",
    "access-control-allow-headers": "authorization, content-type, accept, last-event-id, mcp-session-id, mcp-protocol-version",
    "access-control-expose-headers": "mcp-session-id, mcp-protocol-version",
    "access-control-max-age": "600",
    vary: "Origin"
  }

/**
 * The SDK transport as a web handler, its answers with the CORS headers added. A POST's body was read and
 * checked before (`parsedBody`): the SDK does not read it again.
 */
const webHandler = (
  transport: WebStandardStreamableHTTPServerTransport,
  cors: Record<string, string>,
  parsedBody: ReadonlyArray<JSONRPCMessage> | JSONRPCMessage | undefined
) =>
async (request: Request) => {
  const response = await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody })
  for (const [name, value] of Object.entries(cors)) response.headers.set(name, value)
  return response
}

/**
 * `serve --http`: MCP Streamable HTTP at `/mcp` (the SDK's web-standard transport, mounted on the
 * platform's Node HTTP server), `GET /healthz` for supervisors. One process, many clients: a session per
 * client, each its own SDK Server, all sharing the services (one connection pool) and one set of runs,
 * so a run started by one client is found by `get_run` from another. Runs until interrupted (SIGINT,
 * SIGTERM, SIGHUP): then it stops accepting, cancels the runs in flight (manifests written), lets the
 * calls waiting for them answer, closes every session, and returns.
 */
export const serveMcpHttp = Effect.fn("serveMcpHttp")(function*(options: HttpServeOptions) {
  const settings = yield* Settings
  const version = yield* packageVersion
  const access = yield* accessFor(options.host)
  yield* serve(options, settings, version, access).pipe(Effect.scoped)
})

/** Who may call: the bearer token, where it came from, and whether only this machine can reach the server. */
interface Access {
  readonly onLoopback: boolean
  readonly token: Redacted.Redacted<string>
  /** Set in the environment; else generated for this process, and printed. */
  readonly fromEnvironment: boolean
  readonly authorized: (authorization: string | undefined) => "ok" | "missing" | "mismatch"
}

/** Beyond loopback a token must be chosen: a generated one is printed, and a printed secret must not leave the machine. */
const accessFor = Effect.fnUntraced(function*(host: string) {
  const onLoopback = isLoopbackHost(host)
  const fromEnvironment = yield* tokenFromEnvironment
  if (Option.isNone(fromEnvironment) && !onLoopback) {
    return yield* new UsageError({
      message: `--host ${
        stripControl(host)
      } is not a loopback address: set ${TOKEN_ENV} (a long random secret) to serve beyond this machine`
    })
  }
  const token = Option.getOrElse(fromEnvironment, generateToken)
  const access: Access = { onLoopback, token, fromEnvironment: Option.isSome(fromEnvironment), authorized: makeTokenCheck(token) }
  return access
})

const unauthorized = (access: Access, credentials: "missing" | "mismatch") =>
  credentials === "missing"
    ? "Unauthorized: no bearer token; send Authorization: Bearer <token>"
    : `Unauthorized: the bearer token does not match ${
      access.fromEnvironment ? `${TOKEN_ENV} of the server` : "the one the server printed when it started"
    }`

/** The server, from listening to shutdown; its scope releases the sessions, then the runs. */
const serve = (options: HttpServeOptions, settings: SettingsValue, version: string, access: Access) =>
  Effect.gen(function*() {
    const refusals = makeRefusalLog()
    const { nodeServer, server, url, port } = yield* listen(options)
    // Released after the sessions: whatever run a request started meanwhile is cancelled too.
    const runs = yield* makeLiveRuns
    // Released before the runs' set: every session closed, each request still waiting interrupted.
    const sessions = yield* makeSessions(
      { version, runs, redactor: makeRedactor(settings.apiKey) },
      { maxSessions: settings.httpMaxSessions, idleMs: settings.httpSessionIdleMs, maxBodyBytes: settings.httpMaxBodyBytes }
    )
    const health = Effect.all({ sessions: sessions.size, runs: runs.size }).pipe(
      Effect.map((counts) => HttpServerResponse.unsafeJson({ status: "ok", ...counts }))
    )
    const mcp = mcpRoute(sessions, makeBodyCheck(settings.httpMaxBodyBytes, refusals.log), settings.httpMaxSessions)
    const viewer = yield* viewerSite(access, runs, port)
    yield* server.serve(
      HttpRouter.empty.pipe(HttpRouter.get("/healthz", health), HttpRouter.all("/mcp", mcp), HttpRouter.concat(viewerRouter(viewer))),
      guard(access, settings.httpAllowedOrigins, refusals.log)
    )
    // Released first: no new connection or request, then the runs in flight cancelled and awaited, and
    // the requests waiting for them given a moment to answer.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* sessions.stopAccepting
        nodeServer.close()
        yield* runs.cancelAll
        yield* sessions.drain(SHUTDOWN_GRACE_MS)
        yield* refusals.flush
      })
    )
    const login = viewer.access.issueLogin(yield* Clock.currentTimeMillis)
    // One write for both lines: whoever reads the first (a supervisor, a test) has the second too.
    yield* Console.error(
      `parallel-llm: MCP over HTTP at ${url}` +
        (access.fromEnvironment
          ? ` (bearer token from ${TOKEN_ENV})`
          : `; send "Authorization: Bearer ${
            Redacted.value(access.token)
          }" (a token for this process only; set ${TOKEN_ENV} to choose one)`) +
        `\nparallel-llm: runs in a browser at ${url.replace(/\/mcp$/, VIEWER_PATH)}?token=${Redacted.value(login)} (works once, ` +
        `within ${Duration.format(VIEWER_LOGIN_TTL)}; POST ${VIEWER_PATH}/login with the bearer token gives another)`
    )
    yield* Effect.logInfo(`MCP server ready on ${url}; runs go to ${settings.outputDir}`)
    return yield* Effect.never.pipe(Effect.onInterrupt(() => logShutdown(runs, "interrupted")))
  })

const listen = (options: HttpServeOptions) =>
  Effect.gen(function*() {
    // Kept to stop accepting connections first thing on shutdown (the platform closes it again, a no-op).
    const nodeServer = http.createServer()
    const server = yield* NodeHttpServer.make(() => nodeServer, { host: options.host, port: options.port }).pipe(
      Effect.mapError((e) =>
        new UsageError({
          message: stripControl(
            `cannot listen on ${hostInUrl(options.host, options.port)}: ${e.cause instanceof Error ? e.cause.message : String(e.cause)}`
          )
        })
      )
    )
    const port = server.address._tag === "TcpAddress" ? server.address.port : options.port
    return { nodeServer, server, port, url: `http://${hostInUrl(options.host, port)}/mcp` }
  })

/**
 * The run viewer under /runs (the routes `runs open` mounts too): the bearer token works for scripts; a
 * browser trades a printed one-time URL for a session cookie. Without the built page, /runs/ID answers 503.
 */
const viewerSite = (access: Access, runs: LiveRuns, port: number) =>
  Effect.gen(function*() {
    const page = yield* readViewerPage.pipe(
      Effect.tapError((e) => Effect.logWarning(`the run viewer is off: ${e.message}`)),
      Effect.option
    )
    return {
      page: Option.getOrUndefined(page),
      access: makeViewerAccess({
        cookieName: `pllm_runs_${port}`,
        sessionMs: Duration.toMillis(VIEWER_SESSION_TTL),
        loginMs: Duration.toMillis(VIEWER_LOGIN_TTL),
        maxPending: 32
      }),
      bearer: access.authorized,
      runs,
      only: undefined,
      unauthorized: `Unauthorized: open the one-time URL serve --http printed (or POST ${VIEWER_PATH}/login with the bearer token ` +
        "for another), or send Authorization: Bearer <token>"
    } satisfies ViewerSite
  })

/** `/mcp`: the request handed to its session's transport, or the answer for a request without one. */
const mcpRoute = (sessions: Sessions, checkedBody: ReturnType<typeof makeBodyCheck>, maxSessions: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const sessionId = request.headers["mcp-session-id"]
    const cors = corsHeaders(request.headers.origin)
    if (sessionId === undefined && request.method !== "POST") return refuse(400, "Bad Request: Mcp-Session-Id header is required", cors)
    const body = request.method === "POST" ? yield* checkedBody(request, cors) : undefined
    if (body !== undefined && Either.isLeft(body)) return body.left
    const parsedBody = body === undefined ? undefined : body.right
    const answer = yield* sessions.withSession(sessionId, (transport) => HttpApp.fromWebHandler(webHandler(transport, cors, parsedBody)))
    switch (answer) {
      case "unknown":
        return refuse(404, "Session not found", cors, -32001)
      case "full":
        return refuse(503, `Too many sessions (the server allows ${maxSessions}); close one or retry later`, {
          ...cors,
          "retry-after": "5"
        })
      case "closing":
        return refuse(503, "The server is shutting down", cors)
      default:
        return answer
    }
  })

/** Before any route: the Host and the origin, then the token on all but GET /healthz. */
const guard = (access: Access, allowedOrigins: ReadonlyArray<string>, logRefusal: RefusalLog) =>
  HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = (status: number, message: string, headers: Record<string, string> = {}) =>
        logRefusal(request, status, message, message).pipe(Effect.as(refuse(status, message, headers)))
      const host = checkHost(request.headers.host, access.onLoopback)
      if (host === "malformed") return yield* refused(400, "Bad Request: the Host header must be host[:port]")
      if (host === "foreign") return yield* refused(403, "Forbidden: this Host is not allowed")
      // The viewer checks its own: the same origin only, and the cookie, a one-time token or the bearer token.
      if (isViewerPath(request.url)) {
        return yield* app.pipe(
          Effect.tap((response) =>
            response.status === 401 || response.status === 403
              ? logRefusal(request, response.status, `run viewer: refused (${response.status})`, "viewer")
              : Effect.void
          ),
          Effect.tapErrorCause((cause) => logServerError(request, cause))
        )
      }
      const origin = request.headers.origin
      if (!originAllowed(origin, allowedOrigins)) return yield* refused(403, "Forbidden: this Origin is not allowed")
      const cors = corsHeaders(origin)
      // A browser's preflight carries no credentials.
      if (request.method === "OPTIONS") return HttpServerResponse.empty({ status: 204, headers: cors })
      const open = request.method === "GET" && request.url.split("?")[0] === "/healthz"
      const credentials = open ? "ok" : access.authorized(request.headers.authorization)
      if (credentials !== "ok") return yield* refused(401, unauthorized(access, credentials), { ...cors, "www-authenticate": "Bearer" })
      return yield* app.pipe(Effect.tapErrorCause((cause) => logServerError(request, cause)))
    })
  )

const isViewerPath = (url: string): boolean => {
  const path = url.split("?")[0] ?? ""
  return path === VIEWER_PATH || path.startsWith(`${VIEWER_PATH}/`)
}

/**
 * Whatever still fails behind the guard (but an unknown path, 404) is answered 500 by the platform: said, by
 * the failure's name only.
 */
const logServerError = (request: HttpServerRequest.HttpServerRequest, cause: Cause.Cause<unknown>) => {
  const failure = Cause.squash(cause)
  const notFound = Predicate.isTagged(failure, "RouteNotFound")
  return Cause.isInterruptedOnly(cause) || notFound ? Effect.void : serverOnly(
    Effect.logError(
      `HTTP 500 for ${request.method} from ${remoteOf(request)}: ${failure instanceof Error ? failure.name : "a defect"}`
    )
  )
}
