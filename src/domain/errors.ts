import { Schema } from "effect"

// Every way a call to the provider can fail. Each carries what a caller needs to act on it
// (status, Retry-After, model) and says itself whether another attempt could help.

const common = {
  model: Schema.String,
  message: Schema.String
}

/**
 * 429: slow down; `retryAfterMs` is the server's Retry-After when it sent one. Typed so however the 429
 * arrives: as the HTTP status, in a 200 body, or as an event mid-stream.
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...common,
  httpStatus: Schema.Number,
  retryAfterMs: Schema.optional(Schema.Number)
}) {}

/** 401: the API key is missing or wrong. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  ...common,
  httpStatus: Schema.Number
}) {}

/** 402: the account has no credits left. */
export class OutOfCredits extends Schema.TaggedError<OutOfCredits>()("OutOfCredits", {
  ...common,
  httpStatus: Schema.Number
}) {}

/** 403: refused, usually by moderation. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  ...common,
  httpStatus: Schema.Number
}) {}

/** 400, 404, 413, 422 and other 4xx: the request itself is wrong; retrying cannot help. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  ...common,
  httpStatus: Schema.Number
}) {}

/** 408, 5xx, 52x: the provider (or one behind OpenRouter) failed; worth another try. */
export class ProviderFailure extends Schema.TaggedError<ProviderFailure>()("ProviderFailure", {
  ...common,
  httpStatus: Schema.Number,
  retryAfterMs: Schema.optional(Schema.Number)
}) {}

/**
 * A 2xx answer we cannot use: not JSON (or cut short), an HTML page, no choices, null or empty content.
 * Transient: a proxy's page or a truncated body says nothing about the next attempt.
 */
export class InvalidResponse extends Schema.TaggedError<InvalidResponse>()("InvalidResponse", {
  ...common,
  httpStatus: Schema.optional(Schema.Number)
}) {}

/**
 * An error object inside an HTTP 200 body, or an error event in the middle of a stream (OpenRouter
 * reports some provider failures this way).
 */
export class ErrorInBody extends Schema.TaggedError<ErrorInBody>()("ErrorInBody", {
  ...common,
  code: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  transient: Schema.Boolean
}) {}

/** The connection failed or was reset before the answer was complete. */
export class NetworkError extends Schema.TaggedError<NetworkError>()("NetworkError", {
  ...common
}) {}

/** The answer passed the size cap; the connection was closed there. Not retried: it would do it again. */
export class ResponseTooLarge extends Schema.TaggedError<ResponseTooLarge>()("ResponseTooLarge", {
  ...common,
  limitBytes: Schema.Number
}) {}

/** The model's whole time budget (retries included) ran out. */
export class Timeout extends Schema.TaggedError<Timeout>()("Timeout", {
  ...common,
  timeoutMs: Schema.Number
}) {}

/**
 * A CLI agent that cannot answer here: its CLI is not on PATH, not logged in, or refused the model. Not retried:
 * `message` says what to run (`claude login`, …); see docs/cli-agents.md.
 */
export class AgentUnavailable extends Schema.TaggedError<AgentUnavailable>()("AgentUnavailable", {
  ...common
}) {}

export type ProviderError =
  | RateLimited
  | Unauthorized
  | OutOfCredits
  | Forbidden
  | BadRequest
  | ProviderFailure
  | InvalidResponse
  | ErrorInBody
  | NetworkError
  | ResponseTooLarge
  | Timeout
  | AgentUnavailable

/** Whether another attempt could succeed. Permanent failures are never retried: they only burn time and money. */
export const isTransient = (error: ProviderError): boolean => {
  switch (error._tag) {
    case "RateLimited":
    case "ProviderFailure":
    case "NetworkError":
    case "InvalidResponse":
      return true
    case "ErrorInBody":
      return error.transient
    default:
      return false
  }
}

/** The delay the server asked for, if any. */
export const retryAfterOf = (error: ProviderError): number | undefined =>
  error._tag === "RateLimited" || error._tag === "ProviderFailure" ? error.retryAfterMs : undefined

/** HTTP statuses worth another attempt: 408, 429, 5xx (which includes Cloudflare's 52x). */
export const isTransientStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500

/** The HTTP status an error came with, when there was one. */
export const httpStatusOf = (error: ProviderError): number | undefined => "httpStatus" in error ? error.httpStatus : undefined

/** A settings value that cannot be used; `setting` names it the way the user wrote it. */
export class SettingsError extends Schema.TaggedError<SettingsError>()("SettingsError", {
  setting: Schema.String,
  message: Schema.String
}) {}

/** Input refused before any call (no prompt, unreadable file, …). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

/** A run refused before any paid call: prompt too large, unknown model. Nothing was spent. */
export class RunRefused extends Schema.TaggedError<RunRefused>()("RunRefused", {
  message: Schema.String
}) {}

/** The run directory could not be written. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  path: Schema.String,
  message: Schema.String
}) {}

const IN_THE_WAY = "a file is in the way"
const NOT_FOUND = "no such file or directory"
const DENIED = "permission denied"
const BUSY = "the file is busy"

/** What an OS error code means, in words a user acts on. */
const PLAIN_CODES: Readonly<Record<string, string>> = {
  EEXIST: IN_THE_WAY,
  ENOENT: NOT_FOUND,
  EACCES: DENIED,
  EPERM: DENIED,
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EROFS: "the file system is read-only",
  ENOTDIR: "a part of the path is a file, not a directory",
  EISDIR: "it is a directory, not a file",
  ELOOP: "too many symbolic links (a loop?)",
  ENAMETOOLONG: "the name is too long",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
  EBUSY: BUSY,
  EIO: "an input/output error of the disk",
  EFBIG: "the file is too large"
}

/** The same, by @effect/platform's reason, when the error carries no OS code. */
const PLAIN_REASONS: Readonly<Record<string, string>> = {
  AlreadyExists: IN_THE_WAY,
  NotFound: NOT_FOUND,
  PermissionDenied: DENIED,
  Busy: BUSY,
  BadResource: "not a file that can be used here",
  InvalidData: "not readable (invalid data)",
  TimedOut: "timed out",
  UnexpectedEof: "it ended too soon",
  WriteZero: "nothing could be written"
}

/**
 * A file-system failure in plain words ("a file is in the way", "no space left on device"), never the platform's
 * `AlreadyExists: FileSystem.makeDirectory (…): EEXIST…`: its OS code first, then its reason, else its message.
 */
export const plainFsReason = (error: unknown): string => {
  const field = (value: unknown, key: string): unknown =>
    typeof value === "object" && value !== null && key in value ? (value as Record<string, unknown>)[key] : undefined
  const code = field(field(error, "cause"), "code") ?? field(error, "code")
  const reason = field(error, "reason")
  const plain = (typeof code === "string" ? PLAIN_CODES[code] : undefined) ??
    (typeof reason === "string" ? PLAIN_REASONS[reason] : undefined)
  if (plain !== undefined) return plain
  const description = field(error, "description") ?? field(error, "message")
  return typeof description === "string" && description !== "" ? description : "an error of the file system"
}

/** "cannot create the output directory /dev/null: a file is in the way": what, where, and why in plain words. */
export const fsFailure = (what: string, error: unknown): string => `${what}: ${plainFsReason(error)}`
