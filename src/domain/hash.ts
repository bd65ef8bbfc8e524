import * as crypto from "node:crypto"

/** The SHA-256 of a text (its UTF-8 bytes) or of bytes, in hex: what the manifests, resume keys and trace ids use. */
export const sha256Hex = (data: string | Uint8Array): string => crypto.createHash("sha256").update(data).digest("hex")

/** The same digest in base64 (a content security policy's `sha256-…` source). */
export const sha256Base64 = (data: string | Uint8Array): string => crypto.createHash("sha256").update(data).digest("base64")

const digest = (text: string): Buffer => crypto.createHash("sha256").update(text, "utf8").digest()

/**
 * Whether a secret given matches the one expected, in a time that says nothing about either: both are hashed to
 * the same length first, so that `timingSafeEqual` compares equal lengths. `expected` is hashed once.
 */
export const secretMatcher = (expected: string) => {
  const hashed = digest(expected)
  return (given: string): boolean => crypto.timingSafeEqual(digest(given), hashed)
}
