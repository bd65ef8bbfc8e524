import { describe, expect, it } from "vitest"
import { attachmentFileName, sniff } from "../../src/programs/attachments/attachment.js"
import { textBlock, userContent } from "../../src/programs/attachments/message.js"

// What a file is comes from its bytes: each accepted signature, text, and the binaries that are refused.

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : [...p])))

describe("sniff", () => {
  it("knows the images and PDFs by their magic bytes, whatever the name", () => {
    expect(sniff(bytes([0x89], "PNG\r\n\x1a\n", [0, 0]))?.mediaType).toBe("image/png")
    expect(sniff(bytes([0xff, 0xd8, 0xff, 0xe0], "JFIF"))?.mediaType).toBe("image/jpeg")
    expect(sniff(bytes("GIF89a", [1, 0]))?.mediaType).toBe("image/gif")
    expect(sniff(bytes("GIF87a", [1, 0]))?.mediaType).toBe("image/gif")
    expect(sniff(bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 "))?.mediaType).toBe("image/webp")
    expect(sniff(bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "))).toBeUndefined()
    expect(sniff(bytes("%PDF-1.7\n"))).toEqual({ kind: "pdf", mediaType: "application/pdf" })
  })

  it("takes valid UTF-8 without NUL bytes as text (a byte-order mark dropped), anything else as binary", () => {
    expect(sniff(new TextEncoder().encode("héllo ✓\n"))).toEqual({ kind: "text", mediaType: "text/plain", text: "héllo ✓\n" })
    expect(sniff(bytes([0xef, 0xbb, 0xbf], "x"))?.text).toBe("x")
    expect(sniff(new Uint8Array())?.kind).toBe("text")
    expect(sniff(bytes("a", [0], "b"))).toBeUndefined()
    expect(sniff(bytes([0xc3, 0x28]))).toBeUndefined()
  })
})

describe("the message a candidate receives", () => {
  it("stays a plain string without images or PDFs; names copies safely", () => {
    expect(userContent("q", [], false)).toBe("q")
    const text = { path: "a b/c.py", kind: "text" as const, mediaType: "text/plain", bytes: new Uint8Array(), sha256: "", text: "x = 1" }
    expect(userContent("q", [text], true)).toBe("File: a b/c.py\n```py\nx = 1\n```\n\nq")
    expect(textBlock("notes", "````\n")).toBe("File: notes\n`````\n````\n`````")
    expect(attachmentFileName(0, "dir/my photo (1).PNG")).toBe("01-my-photo--1-.PNG")
    expect(attachmentFileName(11, "C:\\x\\y.txt")).toBe("12-y.txt")
  })
})
