import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Deferred, Effect, Redacted } from "effect"
import { sha256Base64 } from "../../domain/hash.js"
import { RUN_ID_PATTERN } from "../../services/runReader.js"
import { RunStore } from "../../services/runStore.js"
import type { LiveRuns } from "../liveRuns.js"
import { readViewerData } from "./readViewerData.js"
import { runsListPage } from "./runsListPage.js"
import type { ViewerAccess } from "./viewerAccess.js"
import { VIEWER_PATH } from "./viewerAccess.js"
import { ACTION_NAMES, type ActionName, type Availability, type HttpEnvelope } from "./viewerData.js"

// The viewer's routes, the same for `runs open` (one run) and `serve --http` (every run of its output
// directory): `GET /runs` the list, `GET /runs/ID` the page, `GET /runs/ID/view.json` what the page polls,
// `POST /runs/ID/actions/NAME`, and `POST /runs/login` (bearer only) for a fresh one-time URL. A request
// must come from no Origin but this server's own, and carry the session cookie, a one-time `?token=` (on a
// page: traded for the cookie, then redirected to the address without it) or, where the server has one,
// the bearer token. The Host header was checked before, by the server's own guard.

export interface ViewerSite {
  /** The page (dist/viewer.html); undefined when it was not built. */
  readonly page: string | undefined
  readonly access: ViewerAccess
  /** `serve --http`'s bearer check, for scripts; `runs open` has none. */
  readonly bearer: ((authorization: string | undefined) => "ok" | "missing" | "mismatch") | undefined
  /** The runs this process runs: a live one is read from memory (tokens streamed so far), and can be cancelled. */
  readonly runs: LiveRuns
  /** `runs open`: the one run it shows (any other id is unknown here). */
  readonly only: string | undefined
  /** What a refused request is told: how to get in. */
  readonly unauthorized: string
}

const COMMON_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" }

const refuse = (status: number, message: string) => HttpServerResponse.text(`${message}\n`, { status, headers: COMMON_HEADERS })

/** The page's own script may run, nothing else: its hash in the content security policy. */
const pagePolicy = (page: string): string => {
  const script = /<script>([\s\S]*)<\/script>/.exec(page)?.[1] ?? ""
  return [
    "default-src 'none'",
    `script-src 'sha256-${sha256Base64(script)}'`,
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** The list has no script at all. */
const LIST_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const htmlHeaders = (policy: string) => ({ ...COMMON_HEADERS, "content-security-policy": policy, "x-frame-options": "DENY" })

/** A browser request from another origin (another port of localhost is one) is refused: no CORS here. */
const foreignOrigin = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const origin = request.headers.origin
  const host = request.headers.host
  return origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`
}

type Admission = { readonly _tag: "in"; readonly viaCookie: boolean } | {
  readonly _tag: "out"
  readonly response: HttpServerResponse.HttpServerResponse
}

const admit = (site: ViewerSite, request: HttpServerRequest.HttpServerRequest, nowMs: number): Admission => {
  if (foreignOrigin(request)) return { _tag: "out", response: refuse(403, "Forbidden: this Origin is not allowed") }
  if (site.access.verify(request.cookies[site.access.cookieName], nowMs)) return { _tag: "in", viaCookie: true }
  const bearer = site.bearer?.(request.headers.authorization) ?? "missing"
  return bearer === "ok" ? { _tag: "in", viaCookie: false } : { _tag: "out", response: refuse(401, site.unauthorized) }
}

/** The cookie renewed: good for another session from now, sent only under /runs. */
const withSession = (site: ViewerSite, nowMs: number, viaCookie: boolean) => (response: HttpServerResponse.HttpServerResponse) =>
  !viaCookie ? response : HttpServerResponse.unsafeSetCookie(response, site.access.cookieName, site.access.sessionValue(nowMs), {
    httpOnly: true,
    sameSite: "strict",
    path: VIEWER_PATH,
    maxAge: site.access.sessionMs
  })

/**
 * Runs a page's handler for an admitted request. A `?token=` is traded first: the cookie set, and the
 * browser sent to the same address without the token, so that it stays out of the history.
 */
const guarded = <E, R>(
  site: ViewerSite,
  handle: (nowMs: number) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const nowMs = yield* Clock.currentTimeMillis
    const url = new URL(request.url, "http://viewer.invalid")
    const token = url.searchParams.get("token")
    if (request.method === "GET" && token !== null) {
      if (foreignOrigin(request)) return refuse(403, "Forbidden: this Origin is not allowed")
      if (!site.access.redeem(token, nowMs)) return refuse(401, site.unauthorized)
      const back = HttpServerResponse.redirect(url.pathname, { status: 303, headers: COMMON_HEADERS })
      return withSession(site, nowMs, true)(back)
    }
    const admission = admit(site, request, nowMs)
    if (admission._tag === "out") return admission.response
    return yield* handle(nowMs).pipe(Effect.map(withSession(site, nowMs, admission.viaCookie)))
  })

/** The run id of the route, when it names a run shown here: checked before any path is made of it. */
const routeRunId = (site: ViewerSite) =>
  Effect.map(HttpRouter.params, (params): string | undefined => {
    const id = params.runId
    return id !== undefined && RUN_ID_PATTERN.test(id) && (site.only === undefined || site.only === id) ? id : undefined
  })

const NOT_FOUND = "Not Found: no such run here (GET /runs lists them)"

/** Which actions this process can do for the run: cancel, for a run it is running; the rest from the command line. */
const offered = (site: ViewerSite, runId: string) =>
  Effect.gen(function*() {
    const live = yield* site.runs.get(runId)
    const running = live !== undefined && !(yield* Deferred.isDone(live.done))
    const actions: Readonly<Record<ActionName, Availability>> = {
      cancel: running ? { available: true } : {
        available: false,
        why: live === undefined ? "Only the process running a run can cancel it, and this one did not start it." : "The run has ended."
      },
      resynthesize: { available: false, why: `Read-only here: parallel-llm resynth ${runId} --synthesizer MODEL does it.` },
      followUp: { available: false, why: `Read-only here: parallel-llm ask --continue ${runId} "QUESTION" does it.` }
    }
    return actions
  })

const viewRoute = (site: ViewerSite) =>
  guarded(site, () =>
    Effect.gen(function*() {
      const runId = yield* routeRunId(site)
      if (runId === undefined) return refuse(404, NOT_FOUND)
      return yield* readViewerData(site.runs, runId).pipe(
        Effect.flatMap((data) => Effect.map(offered(site, runId), (actions): HttpEnvelope => ({ data, actions }))),
        Effect.map((envelope) => HttpServerResponse.unsafeJson(envelope, { headers: COMMON_HEADERS })),
        Effect.catchTag("UnknownRun", () => Effect.succeed(refuse(404, NOT_FOUND))),
        Effect.catchAll((e) => Effect.succeed(refuse(500, e.message)))
      )
    }))

/**
 * Whether the run is one to show: this process runs it, or its directory is there. Nothing of it is read: the
 * page asks for the run's view itself (view.json), so reading it for the page too would read it twice.
 */
const isThere = (site: ViewerSite, runId: string) =>
  Effect.flatMap(
    site.runs.get(runId),
    (live) => live !== undefined ? Effect.succeed(true) : Effect.flatMap(RunStore, (store) => store.hasRun(runId))
  )

const pageRoute = (site: ViewerSite) => {
  const policy = site.page === undefined ? "" : pagePolicy(site.page)
  return guarded(site, () =>
    Effect.gen(function*() {
      const runId = yield* routeRunId(site)
      if (runId === undefined) return refuse(404, NOT_FOUND)
      if (site.page === undefined) return refuse(503, "The viewer page was not built (npm run build makes dist/viewer.html)")
      const page = site.page
      return yield* isThere(site, runId).pipe(
        Effect.map((there) =>
          there ? HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders(htmlHeaders(policy))) : refuse(404, NOT_FOUND)
        ),
        Effect.catchAll((e) => Effect.succeed(refuse(500, e.message)))
      )
    }))
}

/** How many runs the list shows, newest first. */
const LISTED = 200

const listRoute = (site: ViewerSite) =>
  guarded(site, () =>
    Effect.gen(function*() {
      if (site.only !== undefined) {
        return HttpServerResponse.redirect(`${VIEWER_PATH}/${site.only}`, { status: 303, headers: COMMON_HEADERS })
      }
      const store = yield* RunStore
      return yield* store.listRuns(LISTED).pipe(
        Effect.map((runs) =>
          HttpServerResponse.html(runsListPage(runs, store.root)).pipe(HttpServerResponse.setHeaders(htmlHeaders(LIST_POLICY)))
        ),
        Effect.catchAll((e) => Effect.succeed(refuse(500, e.message)))
      )
    }))

const actionRoute = (site: ViewerSite) =>
  guarded(site, () =>
    Effect.gen(function*() {
      const runId = yield* routeRunId(site)
      const params = yield* HttpRouter.params
      const name = ACTION_NAMES.find((n) => n === params.name)
      if (runId === undefined || name === undefined) return refuse(404, "Not Found")
      const availability = (yield* offered(site, runId))[name]
      if (!availability.available) return refuse(409, availability.why)
      const live = yield* site.runs.get(runId)
      if (live !== undefined) yield* live.cancel
      return HttpServerResponse.text("cancelled", { headers: COMMON_HEADERS })
    }))

/** `POST /runs/login` with the bearer token: a fresh one-time URL for a browser, on the address asked. */
const loginRoute = (site: ViewerSite) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (foreignOrigin(request)) return refuse(403, "Forbidden: this Origin is not allowed")
    if (site.bearer === undefined || site.bearer(request.headers.authorization) !== "ok") return refuse(401, site.unauthorized)
    const nowMs = yield* Clock.currentTimeMillis
    const token = Redacted.value(site.access.issueLogin(nowMs))
    return HttpServerResponse.text(`http://${request.headers.host}${VIEWER_PATH}?token=${token}\n`, {
      headers: { ...COMMON_HEADERS, "x-expires-in-seconds": String(Math.round(site.access.loginMs / 1000)) }
    })
  })

/** Every route of the viewer, mounted by `runs open` and by `serve --http` alike. */
export const viewerRouter = (site: ViewerSite) =>
  HttpRouter.empty.pipe(
    HttpRouter.get(VIEWER_PATH, listRoute(site)),
    HttpRouter.post(`${VIEWER_PATH}/login`, loginRoute(site)),
    HttpRouter.get(`${VIEWER_PATH}/:runId`, pageRoute(site)),
    HttpRouter.get(`${VIEWER_PATH}/:runId/view.json`, viewRoute(site)),
    HttpRouter.post(`${VIEWER_PATH}/:runId/actions/:name`, actionRoute(site))
  )
