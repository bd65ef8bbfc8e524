// Text from outside (a provider's answer or error, a prompt, a batch id) on its way to a terminal, a log or
// a manifest: control characters could set a window title, clear the screen or forge a status line.

/**
 * C0 controls but tab and newline, DEL, C1 controls (which include the 8-bit CSI), and the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make text read other than it is stored.
 */
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g

/**
 * The text without control or bidi characters; tabs and newlines stay, a CRLF becomes a newline. What a
 * terminal (stdout, stderr) or an MCP client is given passes through it; the files on disk keep the raw text.
 */
export const stripControl = (text: string): string => text.replace(/\r\n/g, "\n").replace(CONTROL, "")

/** The text on one line, every run of whitespace one space: a message quoted inside one line of another. */
export const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/** Hosts that never leave the machine. */
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1)$/i

/**
 * A warning when the API key would travel in clear: a plain `http://` base URL to a host off this machine.
 * Undefined when the URL is https, loopback, unparsable (the settings refuse it) or no key is sent.
 */
export const cleartextKeyWarning = (baseUrl: string, sendsKey: boolean): string | undefined => {
  if (!sendsKey || !URL.canParse(baseUrl)) return undefined
  const url = new URL(baseUrl)
  if (url.protocol !== "http:" || LOOPBACK.test(url.hostname)) return undefined
  return `the base URL ${url.protocol}//${url.host} is plain http off this machine: the API key is sent in clear (use https)`
}

/** Edit distance, for "did you mean" suggestions. */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}
