import { Redacted } from "effect"
import * as crypto from "node:crypto"
import * as net from "node:net"
import { secretMatcher } from "../domain/hash.js"

// Who may talk to `serve --http`: pure checks on the address it binds and on each request's headers.
// A local HTTP server can be reached by any web page the user visits (directly, or through DNS
// rebinding), so a request must carry the bearer token, come from no browser origin or an allowed one,
// and, on loopback, name a loopback host.

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const loopbackAddresses = new net.BlockList()
loopbackAddresses.addSubnet("127.0.0.0", 8, "ipv4")
loopbackAddresses.addAddress("::1", "ipv6")

/** An address that only this machine can reach: `localhost`, 127.0.0.0/8, ::1 (also IPv4-mapped). */
export const isLoopbackHost = (host: string): boolean => {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase()
  if (bare === "localhost") return true
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare)?.[1]
  const address = mapped ?? bare
  const family = net.isIP(address)
  return family !== 0 && loopbackAddresses.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** `127.0.0.1:8080` or `[::1]:8080`: how a host and port are written in a URL. */
export const hostInUrl = (host: string, port: number): string => `${net.isIPv6(host) ? `[${host}]` : host}:${port}`

const HOST_HEADER = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9-]+(?:\.[a-z0-9-]+)*\.?))(?::(\d{1,5}))?$/

/**
 * The hostname of a `Host` header, read strictly as `host[:port]` (`localhost:8080` → `localhost`,
 * `[::1]:80` → `[::1]`): undefined for anything else (`localhost:80@evil.example`, a path, a second port).
 */
export const hostnameOf = (hostHeader: string): string | undefined => {
  const match = HOST_HEADER.exec(hostHeader.trim().toLowerCase())
  if (match === null || Number(match[3] ?? 0) > 65_535) return undefined
  const [, ipv6, name] = match
  if (ipv6 !== undefined) return net.isIPv6(ipv6) ? `[${ipv6}]` : undefined
  return name
}

/**
 * DNS rebinding: a page on `evil.example` that resolves to 127.0.0.1 still sends `Host: evil.example`.
 * A Host that is not `host[:port]` is refused everywhere ("malformed"); on loopback only loopback names
 * are accepted (any port), elsewhere the token is the guard, since the names that reach it are not known here.
 */
export const checkHost = (hostHeader: string | undefined, boundToLoopback: boolean): "ok" | "malformed" | "foreign" => {
  const name = hostHeader === undefined ? undefined : hostnameOf(hostHeader)
  if (name === undefined) return "malformed"
  return !boundToLoopback || LOOPBACK_NAMES.has(name) ? "ok" : "foreign"
}

/**
 * A request without `Origin` comes from a program, not a web page: allowed (the token still applies).
 * A browser origin is allowed when it is on loopback (any port) or listed exactly in `allowed`.
 */
export const originAllowed = (origin: string | undefined, allowed: ReadonlyArray<string>): boolean => {
  if (origin === undefined) return true
  const url = URL.canParse(origin) ? new URL(origin) : undefined
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) return false
  return LOOPBACK_NAMES.has(url.hostname.toLowerCase()) || allowed.includes(url.origin)
}

/**
 * The bearer-token check: "missing" when the request carries no `Authorization: Bearer <token>`,
 * "mismatch" when it carries another token. Both sides are hashed first, so that `timingSafeEqual`
 * compares buffers of equal length and the time taken says nothing about the token, not even its length.
 */
export const makeTokenCheck = (token: Redacted.Redacted<string>) => {
  const matches = secretMatcher(Redacted.value(token))
  return (authorization: string | undefined): "ok" | "missing" | "mismatch" => {
    const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "")?.[1]
    // Whether the header is well formed says nothing about the token.
    if (given === undefined) return "missing"
    return matches(given) ? "ok" : "mismatch"
  }
}

const describeCharacter = (c: string): string =>
  c === " " ? "a space" : c === "\n" ? "a newline" : c === "\r" ? "a carriage return" : c === "\t" ?
    "a tab" :
    /\s/.test(c)
    ? "a whitespace character"
    : /[\x00-\x1f\x7f]/.test(c)
    ? "a control character"
    : "a character outside printable ASCII"

/**
 * Why a chosen token could never match (a client sends it in a header, as `Bearer <token>`): the first
 * character that is not printable ASCII, by position, never the token itself. Undefined when it can.
 */
export const tokenProblem = (token: string): string | undefined => {
  const index = [...token].findIndex((c) => !/^[\x21-\x7e]$/.test(c))
  if (index < 0) return undefined
  return `has ${describeCharacter([...token][index] ?? "")} at character ${
    index + 1
  }: a bearer token can hold only printable ASCII, without spaces`
}

/**
 * The refusal log's limiter: of the refusals of one kind (`key`), one is logged per `windowMs`, and the
 * next one logged says how many were left out since (`check`). `unreported` counts those left out that no
 * line has told yet, for the shutdown. A client retrying with a wrong token all day costs a line a minute.
 */
export const makeRefusalLimiter = (windowMs: number) => {
  const kinds = new Map<string, { loggedAtMs: number; suppressed: number }>()
  return {
    check: (key: string, nowMs: number): { readonly log: boolean; readonly suppressed: number } => {
      const kind = kinds.get(key)
      if (kind !== undefined && nowMs - kind.loggedAtMs < windowMs) {
        kind.suppressed += 1
        return { log: false, suppressed: kind.suppressed }
      }
      kinds.set(key, { loggedAtMs: nowMs, suppressed: 0 })
      return { log: true, suppressed: kind?.suppressed ?? 0 }
    },
    unreported: (): number => [...kinds.values()].reduce((sum, kind) => sum + kind.suppressed, 0)
  }
}

/** A fresh token for a process started without `PARALLEL_LLM_HTTP_TOKEN`: 256 random bits. */
export const generateToken = (): Redacted.Redacted<string> => Redacted.make(crypto.randomBytes(32).toString("base64url"))
