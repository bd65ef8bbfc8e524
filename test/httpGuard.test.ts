import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { generateToken, hostAllowed, hostInUrl, isLoopbackHost, makeTokenCheck, originAllowed } from "../src/mcp/httpGuard.js"

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
    expect(hostAllowed("127.0.0.1:8765", true)).toBe(true)
    expect(hostAllowed("localhost", true)).toBe(true)
    expect(hostAllowed("[::1]:8765", true)).toBe(true)
    expect(hostAllowed("evil.example:8765", true)).toBe(false)
    expect(hostAllowed(undefined, true)).toBe(false)
    expect(hostAllowed("mcp.team.example", false)).toBe(true)
  })

  it("accepts exactly the bearer token", () => {
    const token = generateToken()
    expect(Redacted.value(token)).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const check = makeTokenCheck(token)
    expect(check(`Bearer ${Redacted.value(token)}`)).toBe(true)
    expect(check(`bearer ${Redacted.value(token)}`)).toBe(true)
    expect(check(`Bearer ${Redacted.value(token)}x`)).toBe(false)
    expect(check(`Bearer ${Redacted.value(token).slice(1)}`)).toBe(false)
    expect(check(`Basic ${Redacted.value(token)}`)).toBe(false)
    expect(check(Redacted.value(token))).toBe(false)
    expect(check("Bearer ")).toBe(false)
    expect(check(undefined)).toBe(false)
    expect(makeTokenCheck(Redacted.make(""))("Bearer ")).toBe(false)
  })
})
