import { Duration, Redacted } from "effect"
import * as crypto from "node:crypto"
import { secretMatcher, sha256Hex } from "../../domain/hash.js"
import { generateToken } from "../httpGuard.js"

// Who may see the viewer in a browser, which cannot send a bearer header: a one-time login token (printed
// by the server, short-lived, spent by its first use) is traded for a session cookie signed with this
// process's own key, which says until when it is good. Pure: the time is always given, the key made here.

export interface ViewerAccessOptions {
  /** The cookie's name: a browser keeps one jar per host whatever the port, so the port goes in it. */
  readonly cookieName: string
  /** How long a session lasts after the page last asked (each answer renews the cookie). */
  readonly sessionMs: number
  /** How long a login token stays good unused. */
  readonly loginMs: number
  /** At most this many login tokens wait unused: a new one pushes out the oldest. */
  readonly maxPending: number
}

/** The path the viewer's routes live under, and the only one the cookie is sent to. */
export const VIEWER_PATH = "/runs"

/** How long a printed one-time URL stays good, unused. */
export const VIEWER_LOGIN_TTL = Duration.minutes(10)
/** How long a browser's session lasts after the page last asked. */
export const VIEWER_SESSION_TTL = Duration.hours(1)

const FORMAT = "v1"

export const makeViewerAccess = (options: ViewerAccessOptions) => {
  const key = crypto.randomBytes(32)
  // By the hash of the token, so that the tokens themselves are not kept: hash → when it stops being good.
  const pending = new Map<string, number>()
  const mac = (payload: string): string => crypto.createHmac("sha256", key).update(payload, "utf8").digest("base64url")
  const forgetExpired = (nowMs: number) => {
    for (const [hash, expiresAt] of pending) if (expiresAt <= nowMs) pending.delete(hash)
  }
  return {
    cookieName: options.cookieName,
    sessionMs: options.sessionMs,
    loginMs: options.loginMs,
    /** A fresh one-time login token, good for `loginMs` from `nowMs`. */
    issueLogin: (nowMs: number): Redacted.Redacted<string> => {
      forgetExpired(nowMs)
      const oldest = pending.keys().next()
      if (pending.size >= options.maxPending && oldest.done !== true) pending.delete(oldest.value)
      const token = generateToken()
      pending.set(sha256Hex(Redacted.value(token)), nowMs + options.loginMs)
      return token
    },
    /** Whether `given` is a login token issued here, unspent and unexpired: spent by this call either way. */
    redeem: (given: string, nowMs: number): boolean => {
      const hash = sha256Hex(given)
      const expiresAt = pending.get(hash)
      pending.delete(hash)
      return expiresAt !== undefined && nowMs < expiresAt
    },
    /** A session cookie's value, good for `sessionMs` from `nowMs`: `v1.<until>.<signature>`. */
    sessionValue: (nowMs: number): string => {
      const payload = `${FORMAT}.${nowMs + options.sessionMs}`
      return `${payload}.${mac(payload)}`
    },
    /** Whether a cookie's value was signed here and is still good at `nowMs`. */
    verify: (value: string | undefined, nowMs: number): boolean => {
      const match = /^(v1\.(\d{1,16}))\.([A-Za-z0-9_-]{1,100})$/.exec(value ?? "")
      if (match === null) return false
      const [, payload = "", until = "", signature = ""] = match
      // The signature is checked first, whatever the date says: a forged date is told no sooner than a stale one.
      const signed = secretMatcher(mac(payload))(signature)
      const untilMs = Number(until)
      return signed && nowMs < untilMs && untilMs <= nowMs + options.sessionMs
    }
  }
}
export type ViewerAccess = ReturnType<typeof makeViewerAccess>
