import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { escapeHtml, runsListPage } from "../../src/mcp/site/runsListPage.js"
import { makeViewerAccess } from "../../src/mcp/site/viewerAccess.js"
import type { RunSummary } from "../../src/services/runReader.js"

// The viewer's way in for a browser: one-time login tokens traded for a signed, expiring session cookie;
// and the runs list, whose every run-made text is escaped.

const HOUR = 3_600_000
const options = { cookieName: "pllm_runs_1", sessionMs: HOUR, loginMs: 600_000, maxPending: 3 }
const T0 = 1_800_000_000_000

describe("viewer login tokens", () => {
  it("work once, and only before they expire", () => {
    const access = makeViewerAccess(options)
    const token = Redacted.value(access.issueLogin(T0))
    expect(access.redeem("not-the-token", T0)).toBe(false)
    expect(access.redeem(token, T0 + 1000)).toBe(true)
    expect(access.redeem(token, T0 + 1000)).toBe(false)
    const late = Redacted.value(access.issueLogin(T0))
    expect(access.redeem(late, T0 + options.loginMs)).toBe(false)
    // An expired one is spent by the attempt too.
    expect(access.redeem(late, T0)).toBe(false)
  })

  it("are each different, and at most maxPending wait: a new one pushes out the oldest", () => {
    const access = makeViewerAccess(options)
    const tokens = [1, 2, 3, 4].map(() => Redacted.value(access.issueLogin(T0)))
    expect(new Set(tokens).size).toBe(4)
    expect(tokens.every((t) => /^[A-Za-z0-9_-]{43}$/.test(t))).toBe(true)
    expect(access.redeem(tokens[0]!, T0)).toBe(false)
    expect(tokens.slice(1).map((t) => access.redeem(t, T0))).toEqual([true, true, true])
  })

  it("of one server are refused by another (each process has its own)", () => {
    const token = Redacted.value(makeViewerAccess(options).issueLogin(T0))
    expect(makeViewerAccess(options).redeem(token, T0)).toBe(false)
  })
})

describe("viewer session cookies", () => {
  it("are good until the session ends, then refused", () => {
    const access = makeViewerAccess(options)
    const value = access.sessionValue(T0)
    expect(value).toMatch(/^v1\.\d+\.[A-Za-z0-9_-]{43}$/)
    expect(access.verify(value, T0)).toBe(true)
    expect(access.verify(value, T0 + HOUR - 1)).toBe(true)
    expect(access.verify(value, T0 + HOUR)).toBe(false)
    expect(access.verify(undefined, T0)).toBe(false)
    expect(access.verify("", T0)).toBe(false)
  })

  it("cannot be forged: another key's signature, a date moved later, a cut or padded signature are refused", () => {
    const access = makeViewerAccess(options)
    const other = makeViewerAccess(options)
    expect(access.verify(other.sessionValue(T0), T0)).toBe(false)
    const [format, until, signature] = access.sessionValue(T0).split(".")
    expect(access.verify(`${format}.${Number(until) + HOUR}.${signature}`, T0 + HOUR + 1)).toBe(false)
    expect(access.verify(`${format}.${until}.${signature!.slice(1)}`, T0)).toBe(false)
    expect(access.verify(`${format}.${until}.${signature}A`, T0)).toBe(false)
    expect(access.verify(`v2.${until}.${signature}`, T0)).toBe(false)
  })

  it("dated further off than one session are refused, signed or not (the clock was set back since)", () => {
    const access = makeViewerAccess(options)
    const value = access.sessionValue(T0)
    expect(access.verify(value, T0 - 1)).toBe(false)
    expect(access.verify(value, T0)).toBe(true)
  })
})

const summary = (id: string, prompt: string): RunSummary => ({
  id,
  dir: `/runs/${id}`,
  state: "running",
  manifest: undefined,
  owner: undefined,
  answers: [],
  hasFinal: false,
  promptPreview: prompt
})

describe("the runs list page", () => {
  it("escapes markup and drops control characters", () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'\u001b[31m`)).toBe(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;[31m"
    )
  })

  it("shows a prompt holding markup as text: no element made of it", () => {
    const page = runsListPage([summary("20260101-000000-000-0123abcd", `<img src=x onerror="alert(1)"><script>1</script>`)], "/out<b>")
    expect(page).not.toContain("<img")
    expect(page).not.toContain("<script>1")
    expect(page).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&lt;script&gt;1&lt;/script&gt;")
    expect(page).toContain("/out&lt;b&gt;")
    expect(page).toContain(`<a href="/runs/20260101-000000-000-0123abcd">`)
    expect(runsListPage([], "/out")).toContain("No runs yet.")
  })
})
