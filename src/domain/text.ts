// Text from outside (a provider's answer or error, a prompt, a batch id) on its way to a terminal, a log or
// a manifest: control characters could set a window title, clear the screen or forge a status line.

/** C0 controls but tab and newline, DEL, and C1 controls (which include the 8-bit CSI). */
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g

/** The text without control characters; tabs and newlines stay, a CRLF becomes a newline. */
export const stripControl = (text: string): string => text.replace(/\r\n/g, "\n").replace(CONTROL, "")
