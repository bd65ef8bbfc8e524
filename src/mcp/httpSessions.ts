import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js"
import { Clock, type Context, Effect, ExecutionStrategy, Exit, Runtime, Schedule, Scope } from "effect"
import * as crypto from "node:crypto"
import type { Logging } from "../services/logging.js"
import { type ConnectionOptions, openConnection } from "./connection.js"
import { readableErrors } from "./protocolErrors.js"
import type { ToolServices } from "./tools/tool.js"

/**
 * The SDK's Streamable HTTP transport, with a readable error for every request whose params are malformed,
 * and `onAnswer` told each time a request of the session is answered.
 */
class HttpTransport extends WebStandardStreamableHTTPServerTransport {
  onAnswer: (() => void) | undefined
  override send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    if ("result" in message || "error" in message) this.onAnswer?.()
    return super.send(readableErrors(message), options)
  }
}

interface Session {
  readonly transport: HttpTransport
  readonly scope: Scope.CloseableScope
  /** Whether a request of the session is still being answered. */
  readonly busy: Effect.Effect<boolean>
  /** When a request of the session last began or ended, or was last seen being answered: idle time counts from here. */
  lastSeenMs: number
}

export interface SessionLimits {
  readonly maxSessions: number
  readonly idleMs: number
  readonly maxBodyBytes: number
}

/** Why a request gets no session: the answer to send instead. */
export type NoSession = "unknown" | "full" | "closing"

/** The sessions of one server, and what they share; `opening` and `closing` change in place, one fiber at a time. */
interface Registry {
  readonly sessions: Map<string, Session>
  /** The sessions' own scope: each session's scope is forked from it. */
  readonly scope: Scope.Scope
  readonly runtime: Runtime.Runtime<ToolServices | Logging>
  readonly services: Context.Context<ToolServices | Logging>
  readonly connection: Omit<ConnectionOptions, "onClose">
  readonly limits: SessionLimits
  /** Sessions being opened by an `initialize` not answered yet: they count against the limit. */
  opening: number
  closing: boolean
}

/**
 * The MCP sessions of `serve --http`: one per client, each its own transport and SDK Server (an
 * `openConnection`) over the process's shared services and runs. A session begins with the client's
 * `initialize` POST, and ends on `DELETE /mcp`, after `idleMs` without a request (while none is being
 * answered), or when the scope closes (all of them, and no new one after that).
 */
export const makeSessions = (connection: Omit<ConnectionOptions, "onClose">, limits: SessionLimits) =>
  Effect.gen(function*() {
    const registry: Registry = {
      sessions: new Map(),
      // Forked now so that it closes at this point of the caller's finalizers: a session opened later must
      // not close before what the caller releases first (cancelling the runs).
      scope: yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential),
      runtime: yield* Effect.runtime<ToolServices | Logging>(),
      services: yield* Effect.context<ToolServices | Logging>(),
      connection,
      limits,
      opening: 0,
      closing: false
    }
    yield* expireIdle(registry).pipe(
      Effect.repeat(Schedule.spaced(Math.min(60_000, Math.max(250, limits.idleMs / 4)))),
      Effect.interruptible,
      Effect.forkScoped
    )
    // Released with the scope: no new session, then every session closed (its requests interrupted).
    yield* Effect.addFinalizer(() => closeAll(registry))
    return {
      withSession: <A, E, R>(
        sessionId: string | undefined,
        handle: (transport: WebStandardStreamableHTTPServerTransport) => Effect.Effect<A, E, R>
      ) => withSession(registry, sessionId, handle),
      drain: (ms: number) => drain(registry, ms),
      /** Sessions open now. */
      size: Effect.sync(() => registry.sessions.size),
      /** From now on every request is answered "closing" (the server is shutting down). */
      stopAccepting: Effect.sync(() => {
        registry.closing = true
      })
    }
  })

export type Sessions = Effect.Effect.Success<ReturnType<typeof makeSessions>>

const close = (session: Session) => Scope.close(session.scope, Exit.void)

const forget = (registry: Registry, id: string | undefined) => {
  const session = id === undefined ? undefined : registry.sessions.get(id)
  if (id !== undefined) registry.sessions.delete(id)
  return session
}

/** A new session's transport and server; it joins the registry once the client initialized it. */
const open = (registry: Registry) =>
  Effect.gen(function*() {
    const { runtime, sessions } = registry
    const sessionScope = yield* Scope.fork(registry.scope, ExecutionStrategy.sequential)
    const now = yield* Clock.currentTimeMillis
    let session: Session | undefined
    const transport = new HttpTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      maxRequestBodySize: registry.limits.maxBodyBytes,
      onsessioninitialized: (id) => {
        if (session !== undefined) sessions.set(id, session)
      }
    })
    const { busy } = yield* openConnection(transport, {
      ...registry.connection,
      // DELETE /mcp, or the transport closed: the session goes, with whatever it still holds.
      onClose: () => {
        const gone = forget(registry, transport.sessionId)
        if (gone !== undefined) Runtime.runFork(runtime)(close(gone))
      }
    }).pipe(Scope.extend(sessionScope))
    const opened: Session = { transport, scope: sessionScope, busy, lastSeenMs: now }
    transport.onAnswer = () => {
      opened.lastSeenMs = Runtime.runSync(runtime)(Clock.currentTimeMillis)
    }
    session = opened
    return opened
  }).pipe(Effect.provide(registry.services))

/**
 * Answers a request of the session it names (none: a new session, for an `initialize`), with
 * `handle` given the session's transport; or says why there is no session to answer it.
 */
const withSession = <A, E, R>(
  registry: Registry,
  sessionId: string | undefined,
  handle: (transport: WebStandardStreamableHTTPServerTransport) => Effect.Effect<A, E, R>
): Effect.Effect<A | NoSession, E, R> =>
  Effect.gen(function*() {
    if (registry.closing) return "closing" as const
    if (sessionId !== undefined) {
      const session = registry.sessions.get(sessionId)
      if (session === undefined) return "unknown" as const
      session.lastSeenMs = yield* Clock.currentTimeMillis
      return yield* handle(session.transport)
    }
    if (registry.sessions.size + registry.opening >= registry.limits.maxSessions) return "full" as const
    registry.opening += 1
    return yield* Effect.acquireUseRelease(
      open(registry),
      (session) => handle(session.transport),
      // Anything but a successful `initialize` leaves nothing behind.
      (session) =>
        Effect.suspend(() =>
          session.transport.sessionId !== undefined && registry.sessions.has(session.transport.sessionId) ? Effect.void : close(session)
        )
    ).pipe(
      Effect.ensuring(Effect.sync(() => {
        registry.opening -= 1
      }))
    )
  })

/**
 * Ends the sessions idle for `idleMs` since their last request ended: a session with a request still
 * being answered is never idle, and its idle time starts again from now.
 */
const expireIdle = (registry: Registry) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    for (const [id, session] of registry.sessions) {
      if (yield* session.busy) session.lastSeenMs = now
      if (now - session.lastSeenMs < registry.limits.idleMs) continue
      forget(registry, id)
      yield* Effect.logInfo(`MCP session ${id.slice(0, 8)} idle for ${Math.round((now - session.lastSeenMs) / 1000)} s: closed`)
      yield* close(session)
    }
  })

const closeAll = (registry: Registry) =>
  Effect.suspend(() => {
    registry.closing = true
    const all = [...registry.sessions.values()]
    registry.sessions.clear()
    return Effect.forEach(all, close, { discard: true })
  })

/**
 * Waits, at most `ms`, for the requests being answered to end: on shutdown, a client waiting for a run
 * just cancelled gets that run's result before its session closes.
 */
const drain = (registry: Registry, ms: number) =>
  Effect.suspend(() => Effect.exists([...registry.sessions.values()], (session) => session.busy)).pipe(
    Effect.repeat({ until: (busy) => !busy, schedule: Schedule.spaced(25) }),
    Effect.timeout(ms),
    Effect.ignore
  )
