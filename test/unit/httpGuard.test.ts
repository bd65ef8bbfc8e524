import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import {
  checkHost,
  generateToken,
  hostInUrl,
  isLoopbackHost,
  makeRefusalLimiter,
  makeTokenCheck,
  originAllowed,
  tokenProblem
} from "../../src/mcp/httpGuard.js"

describe("serve --http guard", () => {
  it("knows loopback addresses from the rest", () => {
    for (const host of ["127.0.0.1", "127.8.9.10", "localhost", "LOCALHOST", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"]) {
      expect(isLoopbackHost(host), host).toBe(true)
    }
    for (const host of ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "128.0.0.1", "example.com", "localhost.example.com", "::2"]) {
      expect(isLoopbackHost(host), host).toBe(false)
    }
    expect(hostInUrl("::1", 80)).toBe("[::1]:80")
    expect(hostInUrl("127.0.0.1", 80)).toBe("127.0.0.1:80")
  })

  it("accepts no Origin, loopback origins and the listed ones; refuses the rest", () => {
    expect(originAllowed(undefined, [])).toBe(true)
    expect(originAllowed("http://localhost:6274", [])).toBe(true)
    expect(originAllowed("http://127.0.0.1", [])).toBe(true)
    expect(originAllowed("https://[::1]:8443", [])).toBe(true)
    expect(originAllowed("https://app.example.com", ["https://app.example.com"])).toBe(true)
    expect(originAllowed("https://app.example.com:444", ["https://app.example.com"])).toBe(false)
    expect(originAllowed("https://evil.example", [])).toBe(false)
    expect(originAllowed("http://localhost.evil.example", [])).toBe(false)
    expect(originAllowed("null", [])).toBe(false)
    expect(originAllowed("file://", [])).toBe(false)
  })

  it("checks the Host only on loopback (DNS rebinding)", () => {
    expect(checkHost("127.0.0.1:8765", true)).toBe("ok")
    expect(checkHost("localhost", true)).toBe("ok")
    expect(checkHost("LocalHost:80", true)).toBe("ok")
    expect(checkHost("[::1]:8765", true)).toBe("ok")
    expect(checkHost("[::1]", true)).toBe("ok")
    expect(checkHost("evil.example:8765", true)).toBe("foreign")
    expect(checkHost("mcp.team.example", false)).toBe("ok")
    expect(checkHost("[2001:db8::1]:443", false)).toBe("ok")
  })

  it("reads the Host strictly as host[:port]: anything else is malformed, wherever the server listens", () => {
    for (
      const host of [
        "localhost:80@evil.example",
        "localhost@evil.example",
        "localhost:80:81",
        "localhost:",
        "localhost:99999",
        "localhost/evil",
        "localhost evil",
        "[::1",
        "[::1]x",
        "[evil.example]:80",
        "::1",
        "",
        "user:pass@localhost"
      ]
    ) {
      expect(checkHost(host, true), host).toBe("malformed")
      expect(checkHost(host, false), host).toBe("malformed")
    }
    expect(checkHost(undefined, true)).toBe("malformed")
  })

  it("accepts exactly the bearer token, and tells a missing token from a wrong one", () => {
    const token = generateToken()
    expect(Redacted.value(token)).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const check = makeTokenCheck(token)
    expect(check(`Bearer ${Redacted.value(token)}`)).toBe("ok")
    expect(check(`bearer ${Redacted.value(token)}`)).toBe("ok")
    expect(check(`Bearer ${Redacted.value(token)}x`)).toBe("mismatch")
    expect(check(`Bearer ${Redacted.value(token).slice(1)}`)).toBe("mismatch")
    expect(check(`Basic ${Redacted.value(token)}`)).toBe("missing")
    expect(check(Redacted.value(token))).toBe("missing")
    expect(check("Bearer ")).toBe("missing")
    expect(check(undefined)).toBe("missing")
    expect(makeTokenCheck(Redacted.make(""))("Bearer ")).toBe("missing")
  })

  it("names where a chosen token holds a character it cannot be sent with, never the token", () => {
    expect(tokenProblem("a-token-chosen-by-the-user-0123456789")).toBeUndefined()
    expect(tokenProblem("secret token 0123456789")).toBe(
      "has a space at character 7: a bearer token can hold only printable ASCII, without spaces"
    )
    expect(tokenProblem("secret-token-0123456789\n")).toMatch(/^has a newline at character 24:/)
    expect(tokenProblem("secret\ttoken-0123456789")).toMatch(/^has a tab at character 7:/)
    expect(tokenProblem("sécret-token-0123456789")).toMatch(/^has a character outside printable ASCII at character 2:/)
    expect(tokenProblem("secret\u0007token-0123456789")).toMatch(/^has a control character at character 7:/)
    expect(tokenProblem("secret token 0123456789")).not.toContain("secret")
  })

  it("logs a refusal of each kind once per window, then says how many it left out", () => {
    const limiter = makeRefusalLimiter(60_000)
    const limit = limiter.check
    expect(limit("401 missing", 0)).toEqual({ log: true, suppressed: 0 })
    expect(limit("401 missing", 1_000)).toEqual({ log: false, suppressed: 1 })
    expect(limit("401 missing", 59_999)).toEqual({ log: false, suppressed: 2 })
    // Another kind has its own window.
    expect(limit("403 host", 30_000)).toEqual({ log: true, suppressed: 0 })
    expect(limit("401 missing", 60_000)).toEqual({ log: true, suppressed: 2 })
    expect(limit("401 missing", 60_001)).toEqual({ log: false, suppressed: 1 })
    expect(limiter.unreported()).toBe(1)
    expect(limit("401 missing", 200_000)).toEqual({ log: true, suppressed: 1 })
    expect(limiter.unreported()).toBe(0)
    limit("401 missing", 200_001)
    limit("401 missing", 200_002)
    expect(limiter.unreported()).toBe(2)
  })
})
