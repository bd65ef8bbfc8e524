import { Redacted } from "effect"
import * as crypto from "node:crypto"
import * as net from "node:net"

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

/** The hostname of a `Host` header (`localhost:8080` → `localhost`, `[::1]:80` → `[::1]`). */
const hostnameOf = (hostHeader: string): string => {
  const value = hostHeader.trim().toLowerCase()
  return value.startsWith("[") ? value.slice(0, value.indexOf("]") + 1) : value.split(":")[0] ?? ""
}

/**
 * DNS rebinding: a page on `evil.example` that resolves to 127.0.0.1 still sends `Host: evil.example`.
 * On loopback only loopback names are accepted (any port); on another address the token is the guard,
 * since the names that reach it are not known here.
 */
export const hostAllowed = (hostHeader: string | undefined, boundToLoopback: boolean): boolean =>
  !boundToLoopback || (hostHeader !== undefined && LOOPBACK_NAMES.has(hostnameOf(hostHeader)))

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

const digest = (text: string): Buffer => crypto.createHash("sha256").update(text, "utf8").digest()

/**
 * The bearer-token check. Both sides are hashed first, so that `timingSafeEqual` compares buffers of
 * equal length and the time taken says nothing about the token, not even its length.
 */
export const makeTokenCheck = (token: Redacted.Redacted<string>) => {
  const expected = digest(Redacted.value(token))
  return (authorization: string | undefined): boolean => {
    const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "")?.[1]
    // Whether the header is well formed says nothing about the token.
    return given !== undefined && crypto.timingSafeEqual(digest(given), expected)
  }
}

/** A fresh token for a process started without `PARALLEL_LLM_HTTP_TOKEN`: 256 random bits. */
export const generateToken = (): Redacted.Redacted<string> => Redacted.make(crypto.randomBytes(32).toString("base64url"))
